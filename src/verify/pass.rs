//! One verify read pass as data: the blocks left to read back, which block each slot is
//! reading, the short reads whose rest is still to come, and the failures so far. The
//! pass has no submit/reap loop of its own: the worker issues its reads, commits and reaps
//! them with the same phases as the job's I/O (see `run::worker`), and hands each
//! completion here to be accounted and checked.

use super::block::{self, Expect};
use super::contents::{fail, Contents, Piece, EILSEQ, FROM_LOG};
use super::offload::{Checkers, Verdict};
use crate::defs::Ddir;
use crate::engine::{IoUnit, Op};
use crate::stats::JobStats;
use std::os::fd::RawFd;

/// Where a verify pass takes its blocks from: a list of remembered writes, or the writes
/// of a replayed generator (up to a byte budget).
pub(super) enum Source {
    List(std::vec::IntoIter<Piece>),
    Replay {
        /// A copy of the generator as it was before the job's first I/O.
        gen: Box<crate::gen::Generator>,
        /// Bytes to verify: a block is issued while those verified (completed) so far
        /// and the job's smallest block fit in it, as fio's experimental loop checks.
        budget: u64,
        /// The job's smallest block size (fio's `rw_min_bs`).
        min_bs: u64,
        numberio: u64,
    },
}

impl Source {
    fn next(&mut self) -> Option<Piece> {
        match self {
            Source::List(l) => l.next(),
            Source::Replay { gen, numberio, .. } => loop {
                let n = gen.next_io()?;
                if n.ddir != Ddir::Write {
                    continue;
                }
                let seq = *numberio;
                *numberio += 1;
                return Some(Piece {
                    file: n.file as u32,
                    offset: n.offset,
                    len: n.len as u32,
                    numberio: seq,
                    seed: 0,
                    seq,
                    wno: seq,
                    zeroes: false,
                });
            },
        }
    }
}

/// What the header check of logged block `p` expects (numberio, seed), as the job checks.
fn expect(data: &Contents, p: &Piece) -> Expect {
    Expect {
        numberio: data.check_numberio.then_some(p.numberio),
        seed: data.check_seed.then_some(p.seed),
    }
}

/// Checks block `p` read back in full into `buf`: zeroes for a trimmed block, else its
/// header and checksum (`flags`: fio's verify flags). The failure's errno and text (its
/// details printed already). The one check of a logged block, in the pass after the
/// writes and for the backlog reads among them (`Contents::next_backlog`).
pub(super) fn check_block(
    data: &Contents,
    p: &Piece,
    buf: &mut [u8],
    name: &str,
    flags: u32,
) -> Result<(), (i32, String)> {
    if p.zeroes {
        return super::trim::check_zeroes(buf, name, p.offset).map_err(|t| {
            eprintln!("{t}");
            (EILSEQ, t)
        });
    }
    block::check(
        &data.v,
        &data.filler,
        buf,
        p.offset,
        expect(data, p),
        name,
        flags,
    )
    .map_err(|f| (EILSEQ, fail(&f, name, p.offset)))
}

/// What became of a completed verify read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Done: the slot is free again.
    Free,
    /// Handed to a checker thread; its verdict frees the slot.
    Held,
    /// Short: the rest is to be read in the same slot (queued again by [`ReadPass::again_slot`]).
    Again,
}

/// A failed block of the verify pass.
struct Bad {
    errno: i32,
    text: String,
    /// Never passed over (a read that returned nothing), or not covered by the policy.
    fatal: bool,
}

/// One verify pass in progress (see the module's doc).
pub struct ReadPass {
    pub(super) todo: Source,
    /// The next block to read, taken from `todo` once issued.
    ahead: Option<Piece>,
    /// Per slot: the block its read belongs to.
    which: Vec<Piece>,
    /// Each slot's own buffer (a short read moves the unit's pointer on).
    bases: Vec<*mut u8>,
    /// Slots whose short read is to be continued, as fio requeues the rest.
    again: Vec<u32>,
    /// The failure that ends the pass (the first one).
    error: Option<(i32, String)>,
    /// Failures passed over (their errnos), counted when the pass ends.
    passed: Vec<i32>,
    /// fio's verify flags for the header check: from the verify list or replayed.
    flags: u32,
    /// The blocks come from the log (fio's get_next_verify hands them out).
    pub(super) from_log: bool,
    /// Bytes of blocks read back in full so far (fio's `bytes_verified` in this pass).
    pub(super) verified: u64,
    /// The replayed blocks are written again, not read (see [`Contents::rewrites`]).
    pub(super) rewrite: bool,
}

impl ReadPass {
    /// A pass over `todo` for a pool whose slots have the buffers `bases`.
    pub(super) fn new(mut todo: Source, bases: Vec<*mut u8>) -> ReadPass {
        let from_log = matches!(todo, Source::List(_));
        // Blocks from the log carry fio's "from the verify list" flag; replayed ones not.
        let flags = if from_log { FROM_LOG } else { 0x08 };
        ReadPass {
            ahead: todo.next(),
            todo,
            which: vec![Piece::default(); bases.len()],
            bases,
            again: Vec::new(),
            error: None,
            passed: Vec::new(),
            flags,
            from_log,
            verified: 0,
            rewrite: false,
        }
    }

    /// True once a failure ended the pass.
    #[inline]
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// True when no block is left to issue (none left, or a replay's budget is spent:
    /// see [`Self::has_block`]) and no short read waits for its rest.
    #[inline]
    pub fn exhausted(&self) -> bool {
        !self.has_block() && self.again.is_empty()
    }

    /// The slot whose short read is to be continued next, if any (it goes before any new
    /// block); its unit still describes the rest to read.
    #[inline]
    pub fn again_slot(&self) -> Option<u32> {
        self.again.last().copied()
    }

    /// True when a new block waits to be read (a replay: within its budget).
    #[inline]
    pub fn has_block(&self) -> bool {
        match self.todo {
            Source::Replay { budget, min_bs, .. } => {
                self.ahead.is_some() && self.verified + min_bs <= budget
            }
            Source::List(_) => self.ahead.is_some(),
        }
    }

    /// True when the pass reads back logged blocks (not a replay of the writes).
    #[inline]
    pub fn reads_log(&self) -> bool {
        self.from_log
    }

    /// True when the pass's blocks are written instead of read (see
    /// [`Contents::rewrites`]): the caller fills the unit with [`Contents::refill`].
    #[inline]
    pub fn rewrites(&self) -> bool {
        self.rewrite
    }

    /// The verify header number of the block in `slot`.
    pub fn numberio(&self, slot: u32) -> u64 {
        self.which[slot as usize].numberio
    }

    /// Describes the next block's read in `u` (a free slot): op, file, offset, length.
    pub fn start_block(&mut self, u: &mut IoUnit, fds: &[RawFd]) {
        let Some(p) = self.ahead else { return };
        u.op = Op::Rw(Ddir::Read);
        u.file = p.file;
        u.fd = fds.get(p.file as usize).copied().unwrap_or(-1);
        u.offset = p.offset;
        u.len = p.len as usize;
        self.which[u.slot as usize] = p;
        if self.from_log {
            crate::dprint!(
                crate::debug::Cat::Verify,
                "get_next_verify: ret io_u {:p}",
                u.buf
            );
        }
    }

    /// The engine took the read set up last (a new block when `fresh`, else the rest of
    /// a short read): the next one comes from further on.
    #[inline]
    pub fn taken(&mut self, fresh: bool) {
        if fresh {
            self.ahead = self.todo.next();
        } else {
            self.again.pop();
        }
    }

    /// Accounts a completed read in `u` (its `result` set) at `now`, then checks it here
    /// or hands it to a checker; a short one is set up for its rest. Failures are kept:
    /// the first that may not be passed over ends the pass. A read that completes while
    /// the job is `ramping` is counted with no latency, as the job's own I/O is.
    #[allow(clippy::too_many_arguments)]
    pub fn completed(
        &mut self,
        u: &mut IoUnit,
        data: &Contents,
        ck: &mut Option<Checkers>,
        stats: &mut JobStats,
        names: &[String],
        now: u64,
        stat_start: u64,
        ramping: bool,
    ) -> Settled {
        let p = self.which[u.slot as usize];
        let name = names.get(p.file as usize).map_or("?", |s| s.as_str());
        if u.result < 0 {
            // A failed read is an I/O error, never a verify one: only a policy covering
            // read errors lets the pass go on.
            let errno = (-u.result) as i32;
            let e = std::io::Error::from_raw_os_error(errno);
            let text = format!(
                "io_u error on file {name}: {e}: read offset={}, buflen={}",
                u.offset, u.len
            );
            let fatal = !data.errors.non_fatal(Ddir::Read as usize, errno);
            if fatal || data.errors.error_dump {
                eprintln!("iobench: {text}");
            }
            self.note(data, errno, text, fatal);
            return self.free(u);
        }
        if u.result == 0 {
            // Nothing read: the block is gone (fio's "full resid"), fatal.
            let text = format!(
                "verify: nothing read at file {name} offset {} ({} bytes asked): \
                 Input/output error",
                u.offset, u.len
            );
            eprintln!("iobench: {text}");
            self.note(data, libc::EIO, text, true);
            return self.free(u);
        }
        if (u.result as usize) < u.len {
            // A short read: the rest is read again, as fio requeues it.
            let got = u.result as usize;
            stats.record_short(Ddir::Read);
            u.offset += got as u64;
            // SAFETY: `got < len`, so the pointer stays inside the unit's buffer.
            u.buf = unsafe { u.buf.add(got) };
            u.len -= got;
            self.again.push(u.slot);
            return Settled::Again;
        }
        if ramping {
            stats.record_ramp_io(Ddir::Read, u.result as u64);
        } else {
            stats.record_io_at(
                Ddir::Read,
                u.result as u64,
                p.offset,
                0,
                now.saturating_sub(u.issue_ns),
                now.saturating_sub(stat_start),
            );
        }
        u.buf = self.bases[u.slot as usize];
        u.len = p.len as usize;
        self.verified += p.len as u64;
        if self.rewrite {
            // The block was just written from this buffer: fio's check of it passes.
            return self.free(u);
        }
        if let (Some(c), false) = (ck.as_mut(), p.zeroes) {
            c.submit(
                u.slot,
                u.buf,
                u.len,
                p.offset,
                expect(data, &p),
                p.file,
                self.flags,
            );
            return Settled::Held;
        }
        // SAFETY: the read completed into this unit's buffer of `len` bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(u.buf, u.len) };
        if let Err((errno, text)) = check_block(data, &p, buf, name, self.flags) {
            self.note(data, errno, text, false);
        }
        self.free(u)
    }

    /// A checker's verdict: notes its failure and returns the slot it frees.
    pub fn verdict(&mut self, v: Verdict, data: &Contents, names: &[String]) -> u32 {
        if let Err(f) = v.result {
            let name = names.get(v.file as usize).map_or("?", |s| s.as_str());
            let text = fail(&f, name, v.offset);
            self.note(data, EILSEQ, text, false);
        }
        v.slot
    }

    /// A unit's read is settled: it gets its own buffer back and its slot is free.
    #[inline]
    fn free(&self, u: &mut IoUnit) -> Settled {
        u.buf = self.bases[u.slot as usize];
        Settled::Free
    }

    /// Keeps a failure: passed over (counted at the end) when it may be, a verify
    /// mismatch under `continue_on_error=verify` or an I/O error under a policy covering
    /// it; otherwise the first such failure ends the pass.
    fn note(&mut self, data: &Contents, errno: i32, text: String, fatal: bool) {
        let b = Bad { errno, text, fatal };
        let go_on = if b.errno == EILSEQ && !b.fatal {
            data.keep_going
        } else {
            !b.fatal
        };
        if go_on {
            self.passed.push(b.errno);
        } else if self.error.is_none() {
            self.error = Some((b.errno, b.text));
        }
    }

    /// Ends the pass: units left mid short read get their own buffers back, failures
    /// passed over are counted. Returns the failure that ended the pass.
    pub(super) fn end(
        &mut self,
        pool: &mut [IoUnit],
        stats: &mut JobStats,
    ) -> Result<(), (i32, String)> {
        for (u, &b) in pool.iter_mut().zip(&self.bases) {
            u.buf = b;
        }
        for &errno in &self.passed {
            stats.record_error(errno, "");
        }
        self.error.take().map_or(Ok(()), Err)
    }
}
