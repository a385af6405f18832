//! `verify_async=N`: N checker threads verify read-back blocks while the job's thread keeps
//! reads in flight, as fio's async verify threads do. A block's buffer stays with its
//! checker until the verdict comes back; only then is its pool slot reused. Channels are
//! bounded by the queue depth and allocated once, so handing a block over allocates nothing.

use super::block::{self, Expect, Failure};
use crate::buffer::fill::Filler;
use crate::job::verifyopts::VerifyOpts;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::Scope;

/// A read-back block for a checker.
struct Work {
    slot: u32,
    buf: *mut u8,
    len: usize,
    offset: u64,
    expect: Expect,
    file: u32,
    flags: u32,
}

// SAFETY: `buf` is a pool slot's buffer that the job's thread leaves alone from the hand-over
// until the checker's verdict for that slot comes back, so only one thread touches it.
unsafe impl Send for Work {}

/// A checker's verdict on one block.
pub struct Verdict {
    pub slot: u32,
    pub file: u32,
    pub offset: u64,
    pub result: Result<(), Failure>,
}

/// The checker threads of one verify pass.
pub struct Checkers {
    work: Vec<SyncSender<Work>>,
    verdicts: Receiver<Verdict>,
    next: usize,
    /// Blocks handed over whose verdict has not been collected.
    pub pending: usize,
}

impl Checkers {
    /// Starts `n` checkers (at least one) in `scope` for a queue of `depth` blocks.
    pub fn spawn<'scope, 'env>(
        scope: &'scope Scope<'scope, 'env>,
        n: usize,
        depth: usize,
        v: &'env VerifyOpts,
        filler: &'env Filler,
        names: &'env [String],
    ) -> std::io::Result<Checkers> {
        let depth = depth.max(1);
        let (vtx, verdicts) = sync_channel(depth);
        let mut work = Vec::with_capacity(n);
        for _ in 0..n.max(1) {
            let (tx, rx) = sync_channel::<Work>(depth);
            let vtx = vtx.clone();
            let run = move || {
                if let Some(cpus) = &v.async_cpus {
                    if let Err(e) = crate::affinity::pin_current_thread(cpus) {
                        eprintln!("iobench: verify_async_cpus: cannot pin a checker: {e}");
                    }
                }
                // Named once pinned, so a checker never shows under its name on other CPUs.
                // SAFETY: PR_SET_NAME reads a NUL-terminated name of at most 16 bytes.
                unsafe { libc::prctl(libc::PR_SET_NAME, c"iobench-verify".as_ptr()) };
                for w in rx {
                    // SAFETY: see `Work`: the slot's `len` bytes are ours until we answer.
                    let buf = unsafe { std::slice::from_raw_parts_mut(w.buf, w.len) };
                    let name = names.get(w.file as usize).map_or("?", |s| s.as_str());
                    let result = block::check(v, filler, buf, w.offset, w.expect, name, w.flags);
                    let verdict = Verdict {
                        slot: w.slot,
                        file: w.file,
                        offset: w.offset,
                        result,
                    };
                    if vtx.send(verdict).is_err() {
                        break;
                    }
                }
            };
            // Named (by itself, above) so that checkers can be told apart in /proc, top
            // or a debugger.
            std::thread::Builder::new().spawn_scoped(scope, run)?;
            work.push(tx);
        }
        Ok(Checkers {
            work,
            verdicts,
            next: 0,
            pending: 0,
        })
    }

    /// Hands slot `slot`'s buffer (`len` bytes read from `offset` of file `file`) over.
    #[allow(clippy::too_many_arguments)]
    pub fn submit(
        &mut self,
        slot: u32,
        buf: *mut u8,
        len: usize,
        offset: u64,
        expect: Expect,
        file: u32,
        flags: u32,
    ) {
        let i = self.next;
        self.next = (i + 1) % self.work.len();
        let w = Work {
            slot,
            buf,
            len,
            offset,
            expect,
            file,
            flags,
        };
        // The channels hold a whole queue's worth, so this never waits for long; a
        // checker that is gone (it cannot be, while we hold its channel) loses the block.
        if self.work[i].send(w).is_ok() {
            self.pending += 1;
        }
    }

    /// A verdict if one is ready.
    pub fn try_verdict(&mut self) -> Option<Verdict> {
        let v = self.verdicts.try_recv().ok()?;
        self.pending -= 1;
        Some(v)
    }

    /// Waits for the next verdict (None when nothing is pending).
    pub fn wait_verdict(&mut self) -> Option<Verdict> {
        if self.pending == 0 {
            return None;
        }
        let v = self.verdicts.recv().ok()?;
        self.pending -= 1;
        Some(v)
    }
}
