//! The random map: one bit per block, so a random job touches each block once per pass.
//! A second level of bits marks full words, so finding the next free block after a busy
//! one is quick even when the map is nearly full. Its answers match fio's axmap: the next
//! free block after `b`, wrapping to the start of the map.

#![warn(missing_docs, clippy::cast_possible_truncation)]

/// A bitmap of `nr_bits` blocks with a summary level of full words.
#[derive(Debug, Clone)]
pub struct BlockMap {
    nr_bits: u64,
    /// Level 0: one bit per block.
    words: Vec<u64>,
    /// Level 1: one bit per level-0 word, set when that word is full.
    full: Vec<u64>,
    /// The bits past the end of the last word (always set in `words`, so searches never
    /// return them) that an I/O has covered. fio's axmap lets a block run cross the end
    /// of the map within its last word, so those bits count as newly set once.
    tail_used: u64,
}

impl BlockMap {
    /// A map of `nr_bits` blocks, or `None` when it would take more than `budget` bytes
    /// or the memory cannot be had (a huge file with small blocks must fail cleanly).
    pub fn try_new(nr_bits: u64, budget: u64) -> Option<Self> {
        let nwords = nr_bits.div_ceil(64);
        let bytes = nwords.saturating_add(nwords.div_ceil(64)).saturating_mul(8);
        if bytes > budget {
            return None;
        }
        let nwords = usize::try_from(nwords).ok()?;
        let mut words = Vec::new();
        words.try_reserve_exact(nwords).ok()?;
        let mut full = Vec::new();
        full.try_reserve_exact(nwords.div_ceil(64)).ok()?;
        words.resize(nwords, 0);
        full.resize(nwords.div_ceil(64), 0);
        let mut m = BlockMap {
            nr_bits,
            words,
            full,
            tail_used: 0,
        };
        m.reset();
        Some(m)
    }

    #[cfg(test)]
    pub fn new(nr_bits: u64) -> Self {
        Self::try_new(nr_bits, u64::MAX).expect("test map")
    }

    /// Clears every block.
    pub fn reset(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.tail_used = 0;
        // Bits past the end of the last word count as used, so they are never returned.
        let tail = self.nr_bits % 64;
        if tail != 0 {
            if let Some(last) = self.words.last_mut() {
                *last = !0u64 << tail;
            }
        }
    }

    pub fn is_set(&self, bit: u64) -> bool {
        if bit >= self.nr_bits {
            return false;
        }
        self.words[(bit / 64) as usize] & (1 << (bit % 64)) != 0
    }

    /// Sets up to `nr` blocks from `bit`, stopping at the first one already set or at the
    /// end of the map's last word; returns how many were set (fio's `axmap_set_nr`, which
    /// counts bits past the last block but within its word as set).
    #[inline]
    pub fn set_nr(&mut self, bit: u64, nr: u64) -> u64 {
        // One block in a word before the last (the usual random I/O of the minimum
        // block size): one bit to test and set.
        let w = bit / 64;
        if nr == 1 && w + 1 < self.words.len() as u64 {
            #[allow(clippy::cast_possible_truncation)] // below words.len()
            let w = w as usize;
            let m = 1u64 << (bit % 64);
            let word = &mut self.words[w];
            if *word & m != 0 {
                return 0;
            }
            *word |= m;
            if *word == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
            return 1;
        }
        self.set_run(bit, nr)
    }

    /// `set_nr` for runs of blocks, and for the map's last word.
    fn set_run(&mut self, mut bit: u64, mut nr: u64) -> u64 {
        let mut done = 0;
        let last = self.words.len().saturating_sub(1);
        let tail_mask = match self.nr_bits % 64 {
            0 => 0,
            t => !0u64 << t,
        };
        while nr > 0 && bit / 64 < self.words.len() as u64 && bit <= self.nr_bits {
            // `bit / 64` is below `words.len()` (checked above), so it fits a usize.
            #[allow(clippy::cast_possible_truncation)]
            let w = (bit / 64) as usize;
            let b = bit % 64;
            let n = nr.min(64 - b);
            let mask = if n == 64 {
                !0u64
            } else {
                ((1u64 << n) - 1) << b
            };
            // The word as fio sees it: tail bits only where an I/O covered them.
            let seen = if w == last {
                (self.words[w] & !tail_mask) | self.tail_used
            } else {
                self.words[w]
            };
            let overlap = seen & mask;
            let set = if overlap != 0 {
                // Only the run up to the first busy block.
                overlap.trailing_zeros() as u64 - b
            } else {
                n
            };
            if set == 0 {
                break;
            }
            let mask = if set == 64 {
                !0u64
            } else {
                ((1u64 << set) - 1) << b
            };
            self.words[w] |= mask;
            if w == last {
                self.tail_used |= mask & tail_mask;
            }
            if self.words[w] == !0 {
                self.full[w / 64] |= 1 << (w % 64);
            }
            done += set;
            if set != n {
                break;
            }
            nr -= set;
            bit += set;
        }
        done
    }

    /// The first free block at or after `bit`, if any before the end.
    fn first_free_from(&self, bit: u64) -> Option<u64> {
        if bit >= self.nr_bits {
            return None;
        }
        let w = (bit / 64) as usize;
        let free = !self.words[w] & (!0u64 << (bit % 64));
        if free != 0 {
            return Some(w as u64 * 64 + free.trailing_zeros() as u64);
        }
        // Search the summary for the next word that is not full.
        let start = w + 1;
        if start >= self.words.len() {
            return None;
        }
        let mut fw = start / 64;
        let mut notfull = !self.full[fw] & (!0u64 << (start % 64));
        loop {
            if notfull != 0 {
                let word = fw * 64 + notfull.trailing_zeros() as usize;
                if word >= self.words.len() {
                    return None;
                }
                let free = !self.words[word];
                let bit = word as u64 * 64 + free.trailing_zeros() as u64;
                return (bit < self.nr_bits).then_some(bit);
            }
            fw += 1;
            if fw >= self.full.len() {
                return None;
            }
            notfull = !self.full[fw];
        }
    }

    /// The next free block after `bit` (which is busy), wrapping to the start; `None` when
    /// every block is set.
    pub fn next_free(&self, bit: u64) -> Option<u64> {
        if bit >= self.nr_bits {
            return None;
        }
        let next = if bit + 1 == self.nr_bits { 0 } else { bit + 1 };
        match self.first_free_from(next) {
            Some(b) => Some(b),
            None if next != 0 => self.first_free_from(0),
            None => None,
        }
    }
}

/// The most memory a random map may take: half the machine's physical memory, so a
/// huge file with a small block size fails cleanly instead of aborting the process.
pub fn random_map_budget() -> u64 {
    // SAFETY: sysconf only reads system configuration values.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || page <= 0 {
        return 1 << 30;
    }
    (pages as u64).saturating_mul(page as u64) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_free_wraps_and_skips_full_words() {
        let mut m = BlockMap::new(200);
        assert_eq!(m.set_nr(0, 150), 150);
        assert_eq!(m.next_free(3), Some(150));
        assert_eq!(m.set_nr(150, 50), 50);
        assert_eq!(m.next_free(10), None);
        m.reset();
        m.set_nr(199, 1);
        assert_eq!(m.next_free(199), Some(0));
    }

    #[test]
    fn set_nr_stops_at_busy_block() {
        let mut m = BlockMap::new(128);
        m.set_nr(10, 1);
        assert_eq!(m.set_nr(8, 4), 2);
        assert!(m.is_set(8) && m.is_set(9) && m.is_set(10) && !m.is_set(11));
        assert_eq!(m.set_nr(10, 4), 0);
        assert_eq!(m.set_nr(60, 10), 10);
        assert!(m.is_set(69));
    }

    #[test]
    fn single_block_path_agrees_with_the_run_path() {
        // Maps of sizes with and without a partial last word, filled by random single
        // blocks and short runs: set_nr (with its one-block path) and set_run alone must
        // return the same counts and leave the same words, full bits and tail bits.
        for nr_bits in [64 * 5, 64 * 5 + 17, 70, 3] {
            let (mut a, mut b) = (BlockMap::new(nr_bits), BlockMap::new(nr_bits));
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..4000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let bit = x % (nr_bits + 2);
                let nr = if x & 0x300 == 0 { 1 + (x >> 20) % 5 } else { 1 };
                assert_eq!(
                    a.set_nr(bit, nr),
                    b.set_run(bit, nr),
                    "{nr_bits}: {bit}+{nr}"
                );
            }
            assert_eq!(a.words, b.words);
            assert_eq!(a.full, b.full);
            assert_eq!(a.tail_used, b.tail_used);
            assert!(
                a.full.iter().any(|&f| f != 0),
                "{nr_bits}: some word filled"
            );
        }
    }

    #[test]
    fn every_block_found_once() {
        let mut m = BlockMap::new(1000);
        let mut b = 0;
        let mut n = 0;
        while let Some(f) = if m.is_set(b) { m.next_free(b) } else { Some(b) } {
            m.set_nr(f, 1);
            n += 1;
            b = (f * 7919) % 1000;
        }
        assert_eq!(n, 1000);
    }
}
