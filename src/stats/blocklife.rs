//! `block_error_percentiles`: how often each trim-sized block of the job's one file was
//! trimmed, reported as percentiles of those counts plus how many blocks ended in each
//! state (fio's "block lifetime percentiles", meant for flash wear tests).
//!
//! fio 3.33 keeps this table too, but its report sorts the 32-bit entries as 64-bit
//! ones and aborts (`block_state_category: Assertion '0' failed`) as soon as one block
//! was trimmed. iobench reports what fio means to report: blocks sorted by state class,
//! then trim count; percentile `p` is the entry `p` per cent of the way through the
//! blocks that left the unwritten state.

use serde::{Deserialize, Serialize};

/// fio's block states, in its order (the order of the `states` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BlockState {
    Unwritten = 0,
    Trimmed = 1,
    Written = 2,
    TrimFailure = 3,
    WriteFailure = 4,
}

/// The names fio prints for the states, in state order.
pub const STATE_NAMES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];

/// The per-block table of one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockLife {
    /// The file offset of block 0 (the job's `offset`).
    base: u64,
    /// The trim block size: one entry per this many bytes.
    bs: u64,
    state: Vec<BlockState>,
    trims: Vec<u32>,
}

/// What the report shows: (percentile, trim count) pairs, empty when every block is
/// still unwritten, and the number of blocks in each state.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockReport {
    pub percentiles: Vec<(f64, u32)>,
    pub states: [u64; 5],
}

impl BlockLife {
    /// A table for `io_size` bytes from `base` in blocks of `bs`; the error says why
    /// fio would refuse it (no block, or more than [`MAX_BLOCKS`](crate::job::MAX_BLOCKS)).
    pub fn new(base: u64, io_size: u64, bs: u64) -> Result<Self, String> {
        let n = crate::job::block_count(io_size, bs)?;
        Ok(BlockLife {
            base,
            bs,
            state: vec![BlockState::Unwritten; n as usize],
            trims: vec![0; n as usize],
        })
    }

    /// One completed trim at `offset`: the block counts one more trim, unless it already
    /// failed (a failure is final, as in fio).
    #[inline]
    pub fn trimmed(&mut self, offset: u64) {
        let i = (offset.saturating_sub(self.base) / self.bs) as usize;
        if let (Some(s), Some(t)) = (self.state.get_mut(i), self.trims.get_mut(i)) {
            if *s < BlockState::TrimFailure {
                *s = BlockState::Trimmed;
                *t = t.saturating_add(1);
            }
        }
    }

    /// The percentiles of `list` (sorted) and the state counts. fio prints zero counts
    /// while no block has left the unwritten state (its report skips the counting then),
    /// and so does this.
    pub fn report(&self, list: &[f64]) -> BlockReport {
        let class = |s: BlockState| match s {
            BlockState::Unwritten => 0,
            BlockState::Trimmed | BlockState::Written => 1,
            BlockState::TrimFailure | BlockState::WriteFailure => 2,
        };
        let mut order: Vec<(u8, u32, BlockState)> = self
            .state
            .iter()
            .zip(&self.trims)
            .map(|(&s, &t)| (class(s), t, s))
            .collect();
        order.sort_unstable();
        let uninit = order.iter().take_while(|e| e.0 == 0).count();
        let mut list: Vec<f64> = list.iter().copied().filter(|&p| p != 0.0).collect();
        if uninit == order.len() || list.is_empty() {
            return BlockReport {
                percentiles: Vec::new(),
                states: [0; 5],
            };
        }
        list.sort_by(|a, b| a.total_cmp(b));
        let live = order.len() - uninit;
        let percentiles = list
            .iter()
            .map(|&p| {
                let i = ((p * live as f64 / 100.0) as usize + uninit).min(order.len() - 1);
                (p, order[i].1)
            })
            .collect();
        let mut states = [0u64; 5];
        for &(_, _, s) in &order {
            states[s as usize] += 1;
        }
        BlockReport {
            percentiles,
            states,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_blocks_report_nothing_and_zero_counts() {
        let b = BlockLife::new(0, 64 << 10, 4096).unwrap();
        let r = b.report(&[50.0, 99.0]);
        assert!(r.percentiles.is_empty());
        assert_eq!(r.states, [0; 5]);
    }

    #[test]
    fn percentiles_are_taken_over_the_trimmed_blocks() {
        // 8 blocks: 4 never trimmed, then trim counts 1, 2, 2, 5.
        let mut b = BlockLife::new(4096, 8 * 4096, 4096).unwrap();
        for (blk, n) in [(0u64, 1), (1, 2), (2, 2), (3, 5)] {
            for _ in 0..n {
                b.trimmed(4096 + blk * 4096);
            }
        }
        let r = b.report(&[50.0, 1.0, 99.0]);
        assert_eq!(r.percentiles, vec![(1.0, 1), (50.0, 2), (99.0, 5)]);
        assert_eq!(r.states, [4, 4, 0, 0, 0]);
    }

    #[test]
    fn too_many_or_no_blocks_are_refused() {
        assert!(BlockLife::new(0, 8193 * 512, 512).is_err());
        assert!(BlockLife::new(0, 100, 4096).is_err());
        assert!(BlockLife::new(0, 8192 * 512, 512).is_ok());
    }
}
