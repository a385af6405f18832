//! null: completes every I/O at once without touching any file; measures iobench itself.
//! With iodepth > 1 it behaves as an asynchronous engine, staging units and completing
//! them at commit, as fio's null engine does.

use super::spec::{Flags, JobFacts, QueueCompletion, Spec};
use super::{Caps, Completion, Engine, IoUnit, Queued};
use crate::error::JobError;
use crate::job::reader::Reader;
use std::io;

/// The engine that does no I/O.
#[derive(Debug, Default)]
pub struct Null {
    depth: usize,
    staged: Vec<Completion>,
    staged_len: usize,
    done: Vec<Completion>,
    done_len: usize,
    events: Vec<Completion>,
}

impl Engine for Null {
    fn caps(&self) -> Caps {
        Caps {
            // Before setup (depth 0) the worker asks for its depth: not sync then.
            sync: self.depth == 1,
            no_files: true,
            ..Caps::default()
        }
    }

    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.depth = s.depth as usize;
        let empty = Completion { slot: 0, result: 0 };
        self.staged = vec![empty; self.depth];
        self.done = vec![empty; self.depth];
        self.events = vec![empty; self.depth];
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.depth <= 1 {
            io.result = io.len as i64;
            return Ok(Queued::Completed);
        }
        if self.staged_len + self.done_len >= self.depth {
            return Ok(Queued::Busy);
        }
        self.staged[self.staged_len] = Completion {
            slot: io.slot,
            result: io.len as i64,
        };
        self.staged_len += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.staged_len;
        self.done[self.done_len..self.done_len + n].copy_from_slice(&self.staged[..n]);
        self.done_len += n;
        self.staged_len = 0;
        Ok(n)
    }

    fn getevents(&mut self, _min: usize, max: usize) -> io::Result<usize> {
        // Hand out the newest completions; order does not matter for a null device.
        let n = self.done_len.min(max);
        let from = self.done_len - n;
        self.events[..n].copy_from_slice(&self.done[from..self.done_len]);
        self.done_len = from;
        Ok(n)
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
