//! null: completes every I/O at once without touching any file; measures iobench itself.
//! With iodepth > 1 it behaves as fio's null engine does as an asynchronous one: a commit
//! completes what was staged, `queue` says busy while those completions are unreaped,
//! and a reap that waits for any takes all of them, in the order they were queued. So
//! fio's null job at iodepth=32 really runs one I/O at a time (its depth distribution is
//! all at 1), and so does iobench's.

use super::spec::{Flags, JobFacts, QueueCompletion, Spec};
use super::{Completion, Engine, IoUnit, Queued};
use crate::defs::reader::Reader;
use crate::error::JobError;
use std::io;

/// The engine that does no I/O.
#[derive(Debug, Default)]
pub struct Null {
    depth: usize,
    /// Queued since the last commit.
    staged: Vec<Completion>,
    /// Committed, not yet reaped (done at once).
    done: Vec<Completion>,
    /// What the last reap took, read back by `event`.
    events: Vec<Completion>,
}

impl Engine for Null {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.depth = s.depth as usize;
        self.staged = Vec::with_capacity(self.depth);
        self.done = Vec::with_capacity(self.depth);
        self.events = Vec::with_capacity(self.depth);
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.depth <= 1 {
            io.result = io.len as i64;
            return Ok(Queued::Completed);
        }
        if !self.done.is_empty() || self.staged.len() >= self.depth {
            return Ok(Queued::Busy);
        }
        self.staged.push(Completion {
            slot: io.slot,
            result: io.len as i64,
        });
        Ok(Queued::Queued)
    }

    /// At depth, fio's null queues a sync like any I/O (so a sync point gets one per free
    /// slot until one is reaped, as on the asynchronous engines).
    #[inline]
    fn queues_sync(&self, _kind: super::SyncKind) -> bool {
        self.depth > 1
    }

    #[inline]
    fn busy(&self) -> bool {
        !self.done.is_empty()
    }

    /// Completes what was staged, unless earlier completions are still unreaped (then
    /// nothing is committed, as in fio).
    fn commit(&mut self) -> io::Result<usize> {
        if !self.done.is_empty() {
            return Ok(0);
        }
        std::mem::swap(&mut self.staged, &mut self.done);
        Ok(self.done.len())
    }

    /// Takes every completion when asked to wait for at least one (fio's null ignores
    /// `max`), none when not.
    fn getevents(&mut self, min: usize, _max: usize) -> io::Result<usize> {
        if min == 0 {
            return Ok(0);
        }
        std::mem::swap(&mut self.done, &mut self.events);
        self.done.clear();
        Ok(self.events.len())
    }

    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

impl super::spec::Declared for Null {
    type Opts = ();
    const SPECS: &'static [Spec] = &[Spec::new(
        "null",
        "completes every I/O at once without moving data",
        Flags {
            sync: false,
            diskless: true,
            fake_files: true,
            completes_in_queue: QueueCompletion::AtDepthOne,
            opens_own_files: true,
            ..Flags::SYNC
        },
    )];
    fn configure(_: &'static Spec, _: &Reader, _: &JobFacts) -> Result<(), JobError> {
        Ok(())
    }
    fn build(_: &()) -> Self {
        Null::default()
    }
}
