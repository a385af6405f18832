//! libaio: Linux kernel AIO through the raw io_setup/io_submit/io_getevents system calls (no
//! C library needed). Staged iocbs are submitted at commit in the chunks fio 3.33's engine
//! makes: it keeps them in a ring of iodepth entries and submits up to the ring's end, then
//! from its start, so a batch that wraps around is two io_submit calls. Each call is a plug
//! of its own in the kernel, so where a batch is cut decides which neighbouring I/Os the
//! block layer merges (a 4 KiB sequential read at depth 16, reaping 12 at a time: fio's
//! 2048 reads became 255 requests, one io_submit per batch made 171). Completions are read
//! straight from the ring the kernel shares with us, and io_getevents is called only to
//! wait for more (`userspace_reap` is accepted; it is what this engine always does).

use super::{neg_errno, Completion, Engine, IoUnit, Op, Queued};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::engine::psync::NOWAIT;
use std::io;
use std::sync::atomic::{fence, Ordering};

/// The kernel's `struct iocb` (linux/aio_abi.h), little-endian field order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: u32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// The head of the completion ring the kernel maps at the context address.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;
const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
/// The iocb's `reqprio` holds an I/O priority.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;
const IOCB_CMD_FDSYNC: u16 = 3;
const IOCB_CMD_PREADV: u16 = 7;
const IOCB_CMD_PWRITEV: u16 = 8;

/// libaio's engine options.
#[derive(Debug, Clone, Copy, Default)]
pub struct LibaioOpts {
    pub nowait: bool,
    /// `libaio_vectored` (fio 3.39): reads and writes as IOCB_CMD_PREADV/PWRITEV with one
    /// iovec each.
    pub vectored: bool,
    /// RWF_* flags only writes carry (RWF_ATOMIC under `atomic=1`).
    pub write_flags: u32,
}

/// The kernel AIO engine.
pub struct Libaio {
    opts: LibaioOpts,
    /// cmdprio's per-I/O priorities, when the job asks for them.
    cmdprio: Option<super::cmdprio::Cmdprio>,
    ctx: libc::c_ulong,
    depth: usize,
    /// One iocb per pool slot.
    iocbs: Vec<Iocb>,
    /// One iovec per pool slot, for `libaio_vectored`.
    iovecs: Vec<libc::iovec>,
    /// Staged iocbs, in queue order, not yet submitted.
    staged: Vec<*mut Iocb>,
    staged_from: usize,
    /// Where the next submitted iocb sits in fio's ring of `depth` entries (iocbs
    /// submitted so far, modulo the depth): a commit's io_submit stops at the ring's end.
    ring_pos: usize,
    events: Vec<IoEvent>,
    in_kernel: usize,
}

// SAFETY: the raw pointers point into `iocbs` and `iovecs`, owned by this value; the
// engine is used by one worker at a time.
unsafe impl Send for Libaio {}

impl Libaio {
    pub fn new(opts: LibaioOpts) -> Self {
        Libaio {
            opts,
            cmdprio: None,
            ctx: 0,
            depth: 0,
            iocbs: Vec::new(),
            iovecs: Vec::new(),
            staged: Vec::new(),
            staged_from: 0,
            ring_pos: 0,
            events: Vec::new(),
            in_kernel: 0,
        }
    }

    /// Sends I/Os at cmdprio's priorities.
    pub fn with_cmdprio(mut self, c: Option<super::cmdprio::CmdprioOpts>) -> Self {
        self.cmdprio = c.map(super::cmdprio::Cmdprio::new);
        self
    }

    /// Reads completions from the shared ring without a system call.
    fn user_reap(&mut self, max: usize) -> Option<usize> {
        let ring = self.ctx as *mut AioRing;
        // SAFETY: the context address is the kernel's mapped ring header while the
        // context lives; we check its magic before trusting the layout.
        unsafe {
            if (*ring).magic != AIO_RING_MAGIC {
                return None;
            }
            let nr = (*ring).nr;
            let events = (ring as *mut u8).add(std::mem::size_of::<AioRing>()) as *const IoEvent;
            let mut n = 0;
            while n < max {
                let head = std::ptr::read_volatile(&(*ring).head);
                let tail = std::ptr::read_volatile(&(*ring).tail);
                if head == tail {
                    break;
                }
                fence(Ordering::Acquire);
                self.events[n] = std::ptr::read_volatile(events.add(head as usize));
                fence(Ordering::Release);
                std::ptr::write_volatile(&mut (*ring).head, (head + 1) % nr);
                n += 1;
            }
            Some(n)
        }
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        if self.ctx != 0 {
            // SAFETY: destroying the context we set up; no I/O of ours references it after.
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        }
    }
}

impl Engine for Libaio {
    fn ioprios(&self) -> Vec<u16> {
        self.cmdprio.as_ref().map_or(Vec::new(), |c| c.ioprios())
    }

    #[inline]
    fn queues_sync(&self, _kind: super::SyncKind) -> bool {
        true
    }

    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.depth = s.depth.max(1) as usize;
        self.iocbs = vec![Iocb::default(); self.depth];
        let empty = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        self.iovecs = if self.opts.vectored {
            vec![empty; self.depth]
        } else {
            Vec::new()
        };
        self.staged = Vec::with_capacity(self.depth);
        self.events = vec![IoEvent::default(); self.depth];
        // A new ring: fio's starts at its first entry.
        self.ring_pos = 0;
        // SAFETY: io_setup writes the new context id into `self.ctx`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                self.depth as libc::c_long,
                &mut self.ctx as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "libaio: io_setup({}) failed: {e} (see /proc/sys/fs/aio-max-nr)",
                    self.depth
                ),
            ));
        }
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.staged.len() - self.staged_from + self.in_kernel >= self.depth {
            return Ok(Queued::Busy);
        }
        let v = self.opts.vectored;
        let (opcode, rw_flags) = match io.op {
            Op::Rw(Ddir::Read) if v => (IOCB_CMD_PREADV, self.nowait_flag()),
            Op::Rw(Ddir::Read) => (IOCB_CMD_PREAD, self.nowait_flag()),
            Op::Rw(Ddir::Write) => (
                if v { IOCB_CMD_PWRITEV } else { IOCB_CMD_PWRITE },
                self.nowait_flag() | self.opts.write_flags,
            ),
            Op::Rw(Ddir::Trim) => {
                io.result = super::discard(io.fd, io.offset, io.len);
                return Ok(Queued::Completed);
            }
            Op::Sync { .. } => {
                // The kernel's AIO fsync is not universally supported: do it in line, as
                // fio 3.33 does once nothing waits to be submitted (the I/Os already in
                // the kernel stay in flight beside it).
                if self.staged.len() > self.staged_from {
                    return Ok(Queued::Busy);
                }
                let _ = (IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC);
                io.result = super::do_sync(io);
                return Ok(Queued::Completed);
            }
        };
        // cmdprio: this I/O's priority, carried by the iocb when it has one.
        let prio = match (&mut self.cmdprio, io.op) {
            (Some(c), Op::Rw(d)) => c.pick(d, io.len),
            _ => 0,
        };
        io.prio = prio;
        // Vectored: the iocb points to the slot's one iovec, and counts iovecs.
        let (buf, nbytes) = if v {
            let iov = &mut self.iovecs[io.slot as usize];
            *iov = libc::iovec {
                iov_base: io.buf.cast(),
                iov_len: io.len,
            };
            (iov as *mut libc::iovec as u64, 1)
        } else {
            (io.buf as u64, io.len as u64)
        };
        let cb = &mut self.iocbs[io.slot as usize];
        *cb = Iocb {
            data: io.slot as u64,
            rw_flags,
            opcode,
            reqprio: prio as i16,
            fildes: io.fd as u32,
            buf,
            nbytes,
            offset: io.offset as i64,
            flags: if prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.staged.push(cb as *mut Iocb);
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let mut done = 0;
        // As fio: io_submit from the ring position to the ring's end at most, then on from
        // its start, until everything staged is in or the kernel has no room (EAGAIN
        // leaves the rest staged for after a reap).
        while self.staged_from < self.staged.len() {
            let chunk = (self.staged.len() - self.staged_from).min(self.depth - self.ring_pos);
            // SAFETY: `staged[from..from + chunk]` are pointers to live iocbs in
            // `self.iocbs`, which stay in place until their completion is reaped.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    chunk as libc::c_long,
                    self.staged.as_mut_ptr().add(self.staged_from),
                )
            };
            if r >= 0 {
                let n = r as usize;
                self.in_kernel += n;
                self.staged_from += n;
                self.ring_pos = (self.ring_pos + n) % self.depth;
                done += n;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) if done > 0 || self.in_kernel > 0 => break,
                Some(libc::EAGAIN) => std::thread::sleep(std::time::Duration::from_micros(1)),
                // What went in before the failure is in flight: report it now; the
                // failing iocb, still staged, fails the next commit.
                _ if done > 0 => break,
                _ => return Err(e),
            }
        }
        if self.staged_from == self.staged.len() {
            self.staged.clear();
            self.staged_from = 0;
        }
        Ok(done)
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let max = max.min(self.depth).max(1);
        // Completions already in the ring the kernel shares with us are read without a
        // system call (as fio's userspace_reap, but whenever the ring's layout is the
        // known one); io_getevents is only made to wait for the rest.
        // (io_getevents reads the same ring, so with `min` 0 it would find nothing more.)
        let mut got = self.user_reap(max).unwrap_or(0);
        if got >= min {
            self.in_kernel -= got;
            return Ok(got);
        }
        loop {
            // SAFETY: `events[got..]` has room for `max - got` entries; no timeout.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min.saturating_sub(got) as libc::c_long,
                    (max - got) as libc::c_long,
                    self.events.as_mut_ptr().add(got),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if r >= 0 {
                got += r as usize;
                self.in_kernel -= got;
                return Ok(got);
            }
            let e = io::Error::last_os_error();
            let interrupted = e.raw_os_error() == Some(libc::EINTR);
            // A stop (a signal, the watchdog's timeout) ends a wait on hung I/O.
            if interrupted && !crate::stop::terminating() {
                continue;
            }
            self.in_kernel -= got;
            // Events already taken from the ring are handed back first.
            return if got > 0 || interrupted {
                Ok(got)
            } else {
                Err(e)
            };
        }
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        let ev = &self.events[i];
        Completion {
            slot: ev.data as u32,
            result: ev.res,
        }
    }
}

impl Libaio {
    fn nowait_flag(&self) -> u32 {
        if self.opts.nowait {
            super::psync::RWF_NOWAIT as u32
        } else {
            0
        }
    }
}

#[allow(dead_code)]
fn _assert_layout() {
    const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
    const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
    let _ = neg_errno;
}

pub const LIBAIO_VECTORED: OptDef = opt(
    "libaio_vectored",
    K::Bool,
    "Submit vectored reads and writes (IOCB_CMD_PREADV/PWRITEV)",
)
.def("0")
.cat(C::Engine)
.engines(&["libaio"])
.since(crate::defs::FioRelease::V3_39);

pub const USERSPACE_REAP: OptDef = opt(
    "userspace_reap",
    K::Bool,
    "Reap completions from user space without a system call",
)
.cat(C::Engine)
.engines(&["libaio"]);

impl super::spec::Declared for Libaio {
    type Opts = (LibaioOpts, Option<super::cmdprio::CmdprioOpts>);
    const SPECS: &'static [super::spec::Spec] = &[super::spec::Spec::new(
        "libaio",
        "Linux native asynchronous I/O",
        super::spec::Flags {
            atomic_writes: true,
            ..super::spec::Flags::ASYNC_FS
        },
    )
    .options(&[
        USERSPACE_REAP,
        super::cmdprio::CMDPRIO_PERCENTAGE,
        super::cmdprio::CMDPRIO_CLASS,
        super::cmdprio::CMDPRIO,
        super::cmdprio::CMDPRIO_BSSPLIT,
        super::cmdprio::CMDPRIO_HINT,
        super::psync::NOWAIT,
        LIBAIO_VECTORED,
    ])];
    fn configure(
        _: &'static super::spec::Spec,
        r: &crate::defs::reader::Reader,
        job: &super::spec::JobFacts,
    ) -> Result<Self::Opts, crate::error::JobError> {
        // userspace_reap is read (so a bad value is refused) but changes nothing: this
        // engine always reaps from the ring when it can.
        r.bool(&USERSPACE_REAP)?;
        let l = LibaioOpts {
            nowait: r.bool(&NOWAIT)?,
            vectored: r.bool(&LIBAIO_VECTORED)?,
            write_flags: if job.rwf_atomic {
                super::psync::RWF_ATOMIC as u32
            } else {
                0
            },
        };
        Ok((l, super::cmdprio::CmdprioOpts::resolve(r)?))
    }
    fn build(o: &Self::Opts) -> Self {
        Libaio::new(o.0).with_cmdprio(o.1.clone())
    }
}
