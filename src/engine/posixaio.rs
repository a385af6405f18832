//! posixaio: POSIX asynchronous I/O (aio_read, aio_write, aio_fsync) from the C library.
//! Each request is handed to the library as it is queued; reaping scans the requests in
//! flight with aio_error and, when too few have finished, sleeps in aio_suspend on them.
//! On Linux the C library runs these requests on its own helper threads, so this engine
//! measures that implementation, as fio's posixaio does.

use super::{Completion, Engine, IoUnit, Op, Queued};
use crate::defs::Ddir;
use std::io;

/// The POSIX AIO engine.
pub struct PosixAio {
    /// One control block per pool slot; never moved once set up (the library keeps
    /// pointers to the ones in flight).
    cbs: Vec<libc::aiocb>,
    /// Slots in flight, in no particular order.
    flight: Vec<u32>,
    /// Queued since the last commit (counted as submitted by commit).
    fresh: usize,
    /// Completions found by the last `getevents`.
    events: Vec<Completion>,
    /// Scratch list of control blocks to wait on.
    wait: Vec<*const libc::aiocb>,
}

// SAFETY: the control blocks and the pointers to them are owned by this value and used
// by one worker thread at a time; the C library's helper threads only touch blocks in
// flight, which stay in place until reaped.
unsafe impl Send for PosixAio {}

impl PosixAio {
    pub fn new() -> Self {
        PosixAio {
            cbs: Vec::new(),
            flight: Vec::new(),
            fresh: 0,
            events: Vec::new(),
            wait: Vec::new(),
        }
    }

    /// Moves every finished request from `flight` to `events`, up to `max`.
    fn scan(&mut self, got: &mut usize, max: usize) {
        let mut i = 0;
        while i < self.flight.len() && *got < max {
            let slot = self.flight[i];
            let cb = &mut self.cbs[slot as usize];
            // SAFETY: `cb` was handed to the library by queue() and is not moved.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            let result = match err {
                // SAFETY: the request finished; aio_return collects its result once.
                0 => (unsafe { libc::aio_return(cb) }) as i64,
                libc::ECANCELED => 0,
                e if e > 0 => {
                    // SAFETY: as above; frees the library's record of the request.
                    unsafe { libc::aio_return(cb) };
                    -(e as i64)
                }
                _ => {
                    -(io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EIO) as i64)
                }
            };
            self.events[*got] = Completion { slot, result };
            *got += 1;
            self.flight.swap_remove(i);
        }
    }
}

impl Default for PosixAio {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // The worker drains before dropping; should it not have, wait here so the library
        // never writes into freed control blocks or buffers.
        for &slot in &self.flight {
            let cb = &mut self.cbs[slot as usize];
            // SAFETY: the block is in flight and stays in place while we wait for it.
            unsafe {
                libc::aio_cancel(cb.aio_fildes, cb);
                while libc::aio_error(cb) == libc::EINPROGRESS {
                    let list = [cb as *const libc::aiocb];
                    libc::aio_suspend(list.as_ptr(), 1, std::ptr::null());
                }
                libc::aio_return(cb);
            }
        }
    }
}

impl Engine for PosixAio {
    #[inline]
    fn queues_sync(&self, kind: super::SyncKind) -> bool {
        !matches!(kind, super::SyncKind::Range(_))
    }

    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        let depth = s.depth.max(1) as usize;
        // SAFETY: aiocb is a plain C struct for which all-zero is a valid empty value.
        self.cbs = (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect();
        self.flight = Vec::with_capacity(depth);
        self.events = vec![Completion { slot: 0, result: 0 }; depth];
        self.wait = Vec::with_capacity(depth);
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let cb = &mut self.cbs[io.slot as usize];
        cb.aio_fildes = io.fd;
        cb.aio_buf = io.buf.cast();
        cb.aio_nbytes = io.len;
        cb.aio_offset = io.offset as libc::off_t;
        cb.aio_reqprio = 0;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: the block and the buffer it names belong to the slot, which the worker
        // does not reuse before the completion is reaped.
        let r = unsafe {
            match io.op {
                Op::Rw(Ddir::Read) => libc::aio_read(cb),
                Op::Rw(Ddir::Write) => libc::aio_write(cb),
                Op::Rw(Ddir::Trim) => {
                    io.result = super::discard(io.fd, io.offset, io.len);
                    return Ok(Queued::Completed);
                }
                Op::Sync {
                    kind: super::SyncKind::Range(_),
                } => {
                    io.result = super::do_sync(io);
                    return Ok(Queued::Completed);
                }
                // fio 3.33 asks the library for O_SYNC whichever sync the job wants, so
                // an fdatasync= job makes fsync calls too.
                Op::Sync { .. } => libc::aio_fsync(libc::O_SYNC, cb),
            }
        };
        if r != 0 {
            let e = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if e == libc::EAGAIN && !self.flight.is_empty() {
                return Ok(Queued::Busy);
            }
            io.result = -(e as i64);
            return Ok(Queued::Completed);
        }
        self.flight.push(io.slot);
        self.fresh += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        // Requests went to the library as they were queued.
        Ok(std::mem::take(&mut self.fresh))
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let max = max.min(self.events.len()).max(1);
        let min = min.min(max);
        let mut got = 0;
        loop {
            self.scan(&mut got, max);
            if got >= min || self.flight.is_empty() {
                return Ok(got);
            }
            self.wait.clear();
            for &slot in &self.flight {
                self.wait
                    .push(&self.cbs[slot as usize] as *const libc::aiocb);
            }
            // SAFETY: every pointer names a block in flight, alive in `self.cbs`.
            let r = unsafe {
                libc::aio_suspend(
                    self.wait.as_ptr(),
                    self.wait.len() as libc::c_int,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                if !matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
                    return Err(e);
                }
                // A stop (a signal, the watchdog's timeout) ends a wait on hung I/O.
                if crate::stop::terminating() {
                    return Ok(got);
                }
            }
        }
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

impl super::spec::Declared for PosixAio {
    type Opts = ();
    const SPECS: &'static [super::spec::Spec] = &[super::spec::Spec::new(
        "posixaio",
        "POSIX aio_read and aio_write",
        super::spec::Flags::ASYNC_FS,
    )];
    fn configure(
        _: &'static super::spec::Spec,
        _: &crate::defs::reader::Reader,
        _: &super::spec::JobFacts,
    ) -> Result<(), crate::error::JobError> {
        Ok(())
    }
    fn build(_: &()) -> Self {
        PosixAio::new()
    }
}
