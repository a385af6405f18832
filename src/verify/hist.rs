//! The log of written blocks a verify reads back, kept as fio 3.33 keeps it (iolog.c's
//! `log_io_piece`, verify.c's `get_next_verify`).
//!
//! A job whose files have a random map never writes a block twice in a pass, so its log
//! is a plain list in write order, read back oldest first. Any other job (sequential,
//! `norandommap`, a non-uniform distribution, `random_generator=lfsr`) may write a block
//! again: its log is sorted by file and offset, a new write replacing every logged block
//! it overlaps, and it is read back from the lowest offset. Only the newest write of a
//! block is then checked, whose header is the one on the media, both in the backlog
//! checks among the writes (`verify_backlog`) and in the pass after them.

use super::contents::Piece;
use std::collections::{BTreeMap, VecDeque};

/// The written blocks still to be checked (see the module's doc).
pub(super) enum WriteLog {
    /// Write order (a job with a random map).
    List(VecDeque<Piece>),
    /// By (file, offset), no two blocks overlapping.
    Sorted(BTreeMap<(u32, u64), Piece>),
}

impl WriteLog {
    /// An empty log: sorted when the job may write a block more than once.
    pub(super) fn new(sorted: bool) -> WriteLog {
        if sorted {
            WriteLog::Sorted(BTreeMap::new())
        } else {
            WriteLog::List(VecDeque::new())
        }
    }

    /// Blocks logged (fio's `io_hist_len`).
    pub(super) fn len(&self) -> usize {
        match self {
            WriteLog::List(l) => l.len(),
            WriteLog::Sorted(t) => t.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Logs a completed write; in a sorted log it replaces the blocks it overlaps.
    pub(super) fn push(&mut self, p: Piece) {
        match self {
            WriteLog::List(l) => l.push_back(p),
            WriteLog::Sorted(t) => {
                let end = p.offset + p.len as u64;
                // The logged blocks never overlap, so sorted by offset their ends rise too:
                // the last block starting before `end` is the only one that may reach past
                // `p.offset`, and once it does not, none before it does.
                loop {
                    let hit = t
                        .range((p.file, 0)..(p.file, end))
                        .next_back()
                        .filter(|(_, q)| q.offset + q.len as u64 > p.offset)
                        .map(|(k, _)| *k);
                    match hit {
                        Some(k) => {
                            t.remove(&k);
                        }
                        None => break,
                    }
                }
                t.insert((p.file, p.offset), p);
            }
        }
    }

    /// Drops the block logged with sequence number `seq` at (`file`, `offset`), if it is
    /// still logged (a write that failed).
    pub(super) fn remove(&mut self, file: u32, offset: u64, seq: u64) {
        match self {
            WriteLog::List(l) => {
                if let Some(i) = l.iter().rposition(|p| p.seq == seq) {
                    l.remove(i);
                }
            }
            WriteLog::Sorted(t) => {
                if t.get(&(file, offset)).is_some_and(|p| p.seq == seq) {
                    t.remove(&(file, offset));
                }
            }
        }
    }

    /// The block read back next (the oldest in a list, the lowest offset in a sorted log).
    pub(super) fn first(&self) -> Option<&Piece> {
        match self {
            WriteLog::List(l) => l.front(),
            WriteLog::Sorted(t) => t.first_key_value().map(|e| e.1),
        }
    }

    /// Takes the block read back next (see [`Self::first`]): a backlog verify read.
    pub(super) fn pop_first(&mut self) -> Option<Piece> {
        match self {
            WriteLog::List(l) => l.pop_front(),
            WriteLog::Sorted(t) => t.pop_first().map(|e| e.1),
        }
    }

    /// Takes every block, in the order they are read back (the pass after the writes).
    pub(super) fn take_all(&mut self) -> Vec<Piece> {
        match self {
            WriteLog::List(l) => std::mem::take(l).into(),
            WriteLog::Sorted(t) => std::mem::take(t).into_values().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(file: u32, offset: u64, len: u32, seq: u64) -> Piece {
        Piece {
            file,
            offset,
            len,
            seq,
            numberio: seq,
            ..Piece::default()
        }
    }

    fn offsets(v: &[Piece]) -> Vec<(u32, u64, u64)> {
        v.iter().map(|p| (p.file, p.offset, p.seq)).collect()
    }

    /// The first `n` blocks read back, taken one at a time as the backlog takes them.
    fn take_front(l: &mut WriteLog, n: usize) -> Vec<Piece> {
        (0..n).map_while(|_| l.pop_first()).collect()
    }

    #[test]
    fn a_list_keeps_write_order_and_every_write() {
        let mut l = WriteLog::new(false);
        for (i, off) in [8192u64, 0, 8192].into_iter().enumerate() {
            l.push(piece(0, off, 4096, i as u64));
        }
        assert_eq!(l.len(), 3);
        assert_eq!(offsets(&take_front(&mut l, 2)), [(0, 8192, 0), (0, 0, 1)]);
        assert_eq!(offsets(&l.take_all()), [(0, 8192, 2)]);
        assert!(l.is_empty());
    }

    #[test]
    fn a_sorted_log_keeps_the_newest_write_of_a_block() {
        let mut l = WriteLog::new(true);
        l.push(piece(0, 8192, 4096, 0));
        l.push(piece(1, 0, 4096, 1));
        l.push(piece(0, 0, 4096, 2));
        // The same block again replaces it; one straddling it replaces it too.
        l.push(piece(0, 8192, 4096, 3));
        assert_eq!(l.len(), 3);
        l.push(piece(0, 6144, 4096, 4));
        assert_eq!(l.len(), 3);
        // A block overlapping two logged ones replaces both.
        l.push(piece(0, 2048, 6144, 5));
        assert_eq!(offsets(&take_front(&mut l, 1)), [(0, 2048, 5)]);
        assert_eq!(offsets(&l.take_all()), [(1, 0, 1)]);
    }

    #[test]
    fn a_sorted_log_reads_back_from_the_lowest_offset() {
        let mut l = WriteLog::new(true);
        for (i, off) in [12288u64, 4096, 0, 8192].into_iter().enumerate() {
            l.push(piece(0, off, 4096, i as u64));
        }
        assert_eq!(
            offsets(&take_front(&mut l, 3)),
            [(0, 0, 2), (0, 4096, 1), (0, 8192, 3)]
        );
        assert_eq!(l.len(), 1);
    }
}
