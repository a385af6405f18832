//! `io_submit_mode=offload`: an engine driven by a pool of `iodepth` submitter threads
//! (each with its own engine context, issuing one I/O at a time), so that the job keeps issuing on its own schedule (`rate`, `rate_iops`) while
//! slow I/Os block only a submitter. Latency then counts from when the job issued, not
//! from when a blocked job got round to it (the "coordinated omission" fio's offload mode
//! exists to avoid).
//!
//! To the worker loop this is an asynchronous engine: `queue` stages, `commit` hands the
//! batch to the pool, `getevents` collects what the submitters finished. The hand-over
//! takes a lock per batch and per completion: that is the mode's price, as in fio.

use super::{Completion, Engine, EngineFile, IoUnit, Queued, Setup};
use crate::engine::EngineConfig;
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// An I/O on its way to a submitter.
struct Work(IoUnit);

// SAFETY: the unit's buffer belongs to the worker, which does not touch it while the I/O
// is in flight; exactly one submitter uses it until its completion is handed back.
unsafe impl Send for Work {}

#[derive(Default)]
struct State {
    todo: VecDeque<Work>,
    done: Vec<Completion>,
    /// Submitters that finished their set-up, and the first set-up error.
    ready: usize,
    failed: Option<String>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when work arrives (or the pool is to stop).
    work: Condvar,
    /// Signalled when a completion or a set-up result arrives.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A submitter that panicked poisons nothing we rely on: the queues stay valid.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pool and the worker's side of it.
pub struct Offload {
    config: EngineConfig,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    staged: Vec<Work>,
    events: Vec<Completion>,
}

impl Offload {
    /// A pool of submitters, each with its own engine as `config` describes it.
    pub fn new(config: &EngineConfig) -> Self {
        Offload {
            config: config.for_offload(),
            shared: Arc::default(),
            threads: Vec::new(),
            staged: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// What a submitter needs to set its own engine up.
struct SubmitterSetup {
    files: Vec<EngineFile>,
    names: Vec<String>,
    buf_base: usize,
    slot_len: usize,
}

fn submitter(config: EngineConfig, s: SubmitterSetup, shared: Arc<Shared>) {
    let mut engine = config.boxed();
    let setup = engine.setup(&Setup {
        depth: 1,
        files: &s.files,
        names: &s.names,
        buf_base: s.buf_base as *mut u8,
        slot_len: s.slot_len,
    });
    {
        let mut st = shared.lock();
        st.ready += 1;
        if let Err(e) = setup {
            st.failed.get_or_insert(e.to_string());
        }
        shared.done.notify_all();
    }
    loop {
        let Work(mut io) = {
            let mut st = shared.lock();
            loop {
                if st.stop {
                    return;
                }
                if let Some(w) = st.todo.pop_front() {
                    break w;
                }
                st = shared.work.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        };
        // The submitter's engine has one slot: the I/O takes it for the call.
        let slot = io.slot;
        io.slot = 0;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_one(engine.as_mut(), &mut io)
        }));
        let result = match outcome {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            // Never leave the job waiting for a completion that will not come.
            Err(_) => -(libc::EIO as i64),
        };
        io.slot = slot;
        let mut st = shared.lock();
        st.done.push(Completion {
            slot: io.slot,
            result,
        });
        shared.done.notify_one();
    }
}

/// Issues one I/O and waits for it: a synchronous engine completes it in `queue`; an
/// asynchronous one (its own context of depth 1) is committed and reaped here, as fio's
/// offload workers do.
fn run_one(engine: &mut dyn Engine, io: &mut IoUnit) -> io::Result<i64> {
    // SAFETY: the unit reached this thread through `Offload::queue`, whose caller met
    // `queue`'s contract for it (its buffer stays put until its completion is posted,
    // which happens only after this returns); the inner engine has depth 1 and its one
    // I/O is finished here before the next is queued, so its slot is never reused early.
    match unsafe { engine.queue(io) }? {
        Queued::Completed => Ok(io.result),
        Queued::Queued => {
            engine.commit()?;
            while engine.getevents(1, 1)? == 0 {}
            Ok(engine.event(0).result)
        }
        Queued::Busy => Err(io::Error::other(
            "offload submitter: engine busy at depth 1",
        )),
    }
}

impl Engine for Offload {
    fn setup(&mut self, s: &Setup<'_>) -> io::Result<()> {
        let n = s.depth.max(1) as usize;
        self.staged = Vec::with_capacity(n);
        self.events = Vec::with_capacity(n);
        self.shared.lock().done.reserve(n);
        for i in 0..n {
            let setup = SubmitterSetup {
                files: s.files.to_vec(),
                names: s.names.to_vec(),
                buf_base: s.buf_base as usize,
                slot_len: s.slot_len,
            };
            let (config, shared) = (self.config.clone(), self.shared.clone());
            let t = std::thread::Builder::new()
                .name(format!("submit{i}"))
                .spawn(move || submitter(config, setup, shared))?;
            self.threads.push(t);
        }
        let mut st = self.shared.lock();
        while st.ready < n {
            st = self.shared.done.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        match st.failed.take() {
            Some(e) => Err(io::Error::other(format!("offload submitter: {e}"))),
            None => Ok(()),
        }
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        self.staged.push(Work(*io));
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.staged.len();
        if n > 0 {
            let mut st = self.shared.lock();
            st.todo.extend(self.staged.drain(..));
            if n == 1 {
                self.shared.work.notify_one();
            } else {
                self.shared.work.notify_all();
            }
        }
        Ok(n)
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let mut st = self.shared.lock();
        while st.done.len() < min {
            st = self.shared.done.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        let n = st.done.len().min(max);
        self.events.clear();
        self.events.extend(st.done.drain(..n));
        Ok(n)
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.work.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
