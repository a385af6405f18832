//! Verify trims, as fio 3.33 schedules them (`trim_percentage`, `trim_backlog`,
//! `trim_backlog_batch`, `trim_verify_zero`).
//!
//! Each write logged for verification is chosen for a later trim with the given
//! probability, drawn from the clone's trim random stream (so the same blocks are chosen as
//! under fio). Whenever the count of logged writes is a multiple of `trim_backlog` and the
//! last completed I/O was not a read, the oldest chosen blocks are trimmed, one per
//! opportunity to issue, up to `trim_backlog_batch` more (the backlog when 0); a batch left
//! over waits for newly chosen blocks. A trimmed block is then checked in the verify pass
//! to read back as zeroes, or, with `trim_verify_zero=0`, left out of the pass.
//!
//! Without `trim_backlog` nothing is trimmed (fio behaves the same); the blocks chosen in
//! vain are counted and reported at the end.

use crate::defs::Ddir;
use crate::gen::rand::{FRand, Stream};
use crate::gen::{Generator, NextIo};
use std::collections::{HashSet, VecDeque};

/// A written block chosen for a trim. `wno` is the job's number of the write, so that a
/// later write of the same range is never taken for the trimmed one.
#[derive(Debug, Clone, Copy)]
struct Chosen {
    file: u32,
    offset: u64,
    len: u64,
    wno: u64,
}

/// The trim schedule of one worker.
pub struct Trims {
    /// The choice threshold: a draw at or below it chooses the block.
    threshold: u64,
    rand: FRand,
    /// The stream as seeded, for a new loop (fio reseeds it with `randrepeat`).
    seeded: FRand,
    randrepeat: bool,
    backlog: u64,
    batch_opt: u64,
    zero: bool,
    queue: VecDeque<Chosen>,
    /// Trims still owed by the current backlog point.
    batch: u64,
    /// Writes in the verify log (fio's `io_hist_len`).
    logged: u64,
    last_read: bool,
    /// Chosen but never trimmed because there is no backlog to trim at.
    unscheduled: u64,
    /// The writes trimmed so far, by (file, offset, write number).
    done: HashSet<(u32, u64, u64)>,
}

impl Trims {
    /// The schedule for a worker whose verify options are `v`, or None when it trims
    /// nothing (no verify, no log of writes, or `trim_percentage=0`).
    pub fn new(
        v: &crate::job::verifyopts::VerifyOpts,
        logs_writes: bool,
        randrepeat: bool,
        gen: &Generator,
    ) -> Option<Trims> {
        if v.trim_pct == 0 || !logs_writes {
            return None;
        }
        let rand = gen.side_stream(Stream::Trim);
        Some(Trims {
            threshold: (rand.max() / 100) * v.trim_pct as u64,
            rand,
            seeded: rand,
            randrepeat,
            backlog: v.trim_backlog,
            batch_opt: v.trim_batch,
            zero: v.trim_zero,
            queue: VecDeque::new(),
            batch: 0,
            logged: 0,
            last_read: false,
            unscheduled: 0,
            done: HashSet::new(),
        })
    }

    /// A write entered the verify log: draw whether it is to be trimmed. A newer write over
    /// a chosen range cancels that range's pending trim (its data is no longer the one
    /// chosen).
    pub fn logged(&mut self, file: u32, offset: u64, len: u64, wno: u64) {
        self.logged += 1;
        let chosen = self.rand.next_raw() <= self.threshold;
        if self.backlog == 0 {
            self.unscheduled += chosen as u64;
            return;
        }
        if !self.queue.is_empty() {
            self.queue.retain(|c| {
                c.file != file || c.offset + c.len <= offset || offset + len <= c.offset
            });
        }
        if chosen {
            self.queue.push_back(Chosen {
                file,
                offset,
                len,
                wno,
            });
        }
    }

    /// A new loop of the job starts with an empty log: blocks chosen in the last one and
    /// not trimmed are forgotten, and the choice stream starts over when `randrepeat`.
    pub fn new_loop(&mut self) {
        self.queue.clear();
        self.logged = 0;
        self.batch = 0;
        if self.randrepeat {
            self.rand = self.seeded;
        }
    }

    /// A logged write was read back by a backlog verify: it leaves the log, and its
    /// pending trim, if any, is dropped (as fio drops verified blocks from its trim list).
    pub fn verified(&mut self, wno: u64) {
        self.logged = self.logged.saturating_sub(1);
        if let Some(i) = self.queue.iter().position(|c| c.wno == wno) {
            self.queue.remove(i);
        }
    }

    /// An I/O of direction `d` completed (trims are held back right after reads).
    #[inline]
    pub fn completed(&mut self, d: Ddir) {
        self.last_read = d == Ddir::Read;
    }

    /// The trim to issue now instead of the next generated I/O, if one is due.
    pub fn due(&mut self) -> Option<NextIo> {
        if self.queue.is_empty() {
            return None;
        }
        if self.batch > 0 {
            self.batch -= 1;
        } else if self.logged % self.backlog == 0 && !self.last_read {
            self.batch = if self.batch_opt > 0 {
                self.batch_opt
            } else {
                self.backlog
            };
        } else {
            return None;
        }
        let c = self.queue.pop_front()?;
        if !self.zero {
            // The block leaves the verify log, as under fio.
            self.logged -= 1;
        }
        self.done.insert((c.file, c.offset, c.wno));
        Some(NextIo {
            ddir: Ddir::Trim,
            file: c.file as usize,
            offset: c.offset,
            len: c.len,
        })
    }

    /// What the verify pass does with the write numbered `wno` at `offset` of `file`.
    pub fn fate(&self, file: u32, offset: u64, wno: u64) -> Fate {
        if !self.done.contains(&(file, offset, wno)) {
            Fate::Data
        } else if self.zero {
            Fate::Zeroes
        } else {
            Fate::Skip
        }
    }

    /// True while chosen blocks wait for their trim (fio's trim list is not empty).
    pub fn pending(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Blocks chosen for a trim that were never trimmed (fio reports them as leaked).
    pub fn left_over(&self) -> u64 {
        self.unscheduled + self.queue.len() as u64
    }
}

/// How the verify pass treats one logged write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Check its data.
    Data,
    /// It was trimmed: it must read back as zeroes.
    Zeroes,
    /// It was trimmed and is not checked.
    Skip,
}

/// Checks that a trimmed block reads back as zeroes; the error is fio's line for it.
pub fn check_zeroes(buf: &[u8], name: &str, offset: u64) -> Result<(), String> {
    match buf.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(at) => Err(format!(
            "trim: verify failed at file {name} offset {offset}, length {}, block offset {at}",
            buf.len()
        )),
    }
}
