//! io_uring through the `io-uring` crate: one ring per worker, sized to iodepth. Options as
//! fio's: fixedbufs (registered buffers), registerfiles, sqthread_poll(_cpu), hipri (polled
//! completions), nonvectored (-1: probe the kernel), force_async (IOSQE_ASYNC every N).
//! Kernel features are probed when the ring is made; a missing one is a clear error.

use super::uring_probe::{missing_opcode, register_error, setup_error};
use super::{Completion, Engine, IoUnit, Op, Queued, SyncKind};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::engine::psync::{HIPRI, NOWAIT, UNCACHED};
use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};

/// Pushes `entry` onto the submission ring; false when the ring is full. Under SQPOLL a
/// full ring may only mean the polling thread has not taken the entries already
/// committed: then it waits until the thread frees a slot (the ring holds `depth`
/// entries, never more) and tries once more. Shared by the io_uring and io_uring_cmd
/// engines, whose rings differ only in their entry sizes.
///
/// # Safety
/// Whatever `entry` points at (buffers, iovecs, ranges) must stay valid until its
/// completion is reaped.
pub(super) unsafe fn push_entry<S, C>(
    ring: &mut IoUring<S, C>,
    entry: &S,
    sqpoll: bool,
) -> std::io::Result<bool>
where
    S: squeue::EntryMarker,
    C: cqueue::EntryMarker,
{
    // SAFETY: the caller keeps what the entry points at valid until it completes.
    if unsafe { ring.submission().push(entry) }.is_ok() {
        return Ok(true);
    }
    if !sqpoll {
        return Ok(false);
    }
    ring.submission().sync();
    if ring.submission().is_full() {
        ring.submitter().squeue_wait()?;
    }
    // SAFETY: as above.
    Ok(unsafe { ring.submission().push(entry) }.is_ok())
}
use std::io;
use std::os::fd::AsRawFd;

/// The set-up flags that only make a ring cheaper, tried from the most to the least recent
/// kernel: each step drops the newest flag after the kernel refused it with EINVAL.
/// NO_SQARRAY (6.6) drops the SQ index array; DEFER_TASKRUN (6.1) runs completions only when
/// the issuer asks for events, in its own context, with no interrupting task work;
/// SINGLE_ISSUER (6.0) lets the kernel skip the ring's submission lock; COOP_TASKRUN (5.19)
/// stops completions from interrupting the issuer with an IPI.
const FAST_FLAGS: [u8; 5] = [0b1111, 0b0111, 0b0011, 0b0001, 0];

/// Builds a ring of `entries` submission entries, `configure` adding the caller's own
/// flags, with the cheapest set-up flags the kernel accepts (see `FAST_FLAGS`). `fast`
/// false (SQPOLL rings, rings used by several threads) builds with the caller's flags only.
/// Returns the ring and whether completions are deferred to GETEVENTS (DEFER_TASKRUN).
///
/// A ring built with SINGLE_ISSUER must be submitted to by the thread that built it.
pub fn build_ring(
    entries: u32,
    fast: bool,
    configure: impl Fn(&mut io_uring::Builder),
) -> io::Result<(IoUring, bool)> {
    let sets: &[u8] = if fast { &FAST_FLAGS } else { &[0] };
    let mut last = None;
    for &set in sets {
        let mut b = IoUring::builder();
        configure(&mut b);
        if set & 1 != 0 {
            b.setup_coop_taskrun();
        }
        if set & 2 != 0 {
            b.setup_single_issuer();
        }
        if set & 4 != 0 {
            b.setup_defer_taskrun();
        }
        if set & 8 != 0 {
            b.setup_no_sqarray();
        }
        match b.build(entries) {
            Ok(ring) => return Ok((ring, set & 4 != 0)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
}

const ENTER_GETEVENTS: u32 = 1;
const ENTER_REGISTERED_RING: u32 = 16;
const REGISTER_RING_FDS: u32 = 20;

/// Registers the ring's own descriptor (IORING_REGISTER_RING_FDS, 5.18), so entering it
/// skips the descriptor lookup; its index, or None on kernels without it.
fn register_ring_fd(fd: i32) -> Option<i32> {
    // The kernel's struct io_uring_rsrc_update: offset u32::MAX asks for any free slot.
    #[repr(C)]
    struct Update {
        offset: u32,
        resv: u32,
        data: u64,
    }
    let mut up = Update {
        offset: u32::MAX,
        resv: 0,
        data: fd as u64,
    };
    // SAFETY: one update record, which the kernel fills with the slot it chose.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            fd,
            REGISTER_RING_FDS,
            &mut up as *mut Update,
            1u32,
        )
    };
    (r == 1).then_some(up.offset as i32)
}

/// io_uring's engine options.
#[derive(Debug, Clone, Copy)]
pub struct UringOpts {
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    pub hipri: bool,
    /// -1: use non-vectored opcodes when the kernel has them; 0: vectored; 1: non-vectored.
    pub nonvectored: i32,
    pub force_async: u32,
    pub nowait: bool,
    /// `uncached=1`'s RWF_* bit on buffered reads and writes, as the dialect sends it (0
    /// when off, and when direct=1).
    pub uncached: i32,
    /// RWF_* flags only writes carry (RWF_ATOMIC under `atomic=1`).
    pub write_flags: i32,
}

impl Default for UringOpts {
    fn default() -> Self {
        UringOpts {
            fixedbufs: false,
            registerfiles: false,
            sqthread_poll: false,
            sqthread_poll_cpu: None,
            hipri: false,
            nonvectored: -1,
            force_async: 0,
            nowait: false,
            uncached: 0,
            write_flags: 0,
        }
    }
}

/// The io_uring engine.
pub struct Uring {
    opts: UringOpts,
    /// cmdprio's per-I/O priorities, when the job asks for them.
    cmdprio: Option<super::cmdprio::Cmdprio>,
    ring: Option<IoUring>,
    iovecs: Vec<libc::iovec>,
    events: Vec<Completion>,
    staged: usize,
    in_kernel: usize,
    depth: usize,
    prepped: u32,
    nonvectored: bool,
    /// RWF_* flags put on every read and write (nowait, uncached).
    rw_flags: i32,
    /// Buffers are registered (fixedbufs): slot i's buffer is registered buffer i.
    fixed: bool,
    /// Files are registered (registerfiles, or quietly): I/O names the file by index.
    reg_files: bool,
    /// Completions are posted only when the ring is entered with GETEVENTS.
    deferred: bool,
    /// What `io_uring_enter` is given: the registered ring index (with
    /// IORING_ENTER_REGISTERED_RING in `enter_flags`) or the ring's descriptor.
    enter_fd: i32,
    enter_flags: u32,
}

// SAFETY: the iovecs point into the worker's buffers, used by one worker at a time.
unsafe impl Send for Uring {}

impl Uring {
    pub fn new(opts: UringOpts) -> Self {
        Uring {
            opts,
            ring: None,
            iovecs: Vec::new(),
            events: Vec::new(),
            staged: 0,
            in_kernel: 0,
            depth: 0,
            prepped: 0,
            nonvectored: false,
            rw_flags: 0,
            cmdprio: None,
            fixed: false,
            reg_files: false,
            deferred: false,
            enter_fd: -1,
            enter_flags: 0,
        }
    }

    /// Sends I/Os at cmdprio's priorities.
    pub fn with_cmdprio(mut self, c: Option<super::cmdprio::CmdprioOpts>) -> Self {
        self.cmdprio = c.map(super::cmdprio::Cmdprio::new);
        self
    }

    fn ring(&mut self) -> &mut IoUring {
        self.ring
            .as_mut()
            .expect("io_uring engine used before setup")
    }
}

impl Uring {
    /// Submits what the submission ring holds and, when `want` > 0, waits for that many
    /// completions; `reap` asks for events (GETEVENTS: runs deferred completions) even when
    /// not waiting. One `io_uring_enter`, by the registered ring index when there is one.
    fn enter(&mut self, want: usize, reap: bool) -> io::Result<usize> {
        let (fd, extra) = (self.enter_fd, self.enter_flags);
        let reaping = want > 0 || reap;
        let ring = self.ring();
        if ring.params().is_setup_sqpoll() {
            return ring.submit_and_wait(want);
        }
        let to_submit = ring.submission().len() as u32;
        let mut flags = extra;
        if reaping || ring.params().is_setup_iopoll() {
            flags |= ENTER_GETEVENTS;
        }
        // SAFETY: io_uring_enter with no argument block; the entries it submits point to
        // buffers that stay valid until their completions are reaped.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                want as u32,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// With registerfiles: puts `fd` in registered slot `index` (-1 empties it).
    fn update_registered(&mut self, index: usize, fd: i32) -> io::Result<()> {
        match &self.ring {
            Some(ring) if self.reg_files => ring
                .submitter()
                .register_files_update(index as u32, &[fd])
                .map(|_| ())
                .map_err(|e| register_error("registerfiles", e)),
            _ => Ok(()),
        }
    }
}

impl Engine for Uring {
    fn ioprios(&self) -> Vec<u16> {
        self.cmdprio.as_ref().map_or(Vec::new(), |c| c.ioprios())
    }

    #[inline]
    fn queues_sync(&self, _kind: SyncKind) -> bool {
        true
    }

    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.depth = s.depth.max(1) as usize;
        if self.opts.nowait {
            self.rw_flags |= super::psync::RWF_NOWAIT;
        }
        self.rw_flags |= self.opts.uncached;
        if let (true, Some(cpu)) = (self.opts.sqthread_poll, self.opts.sqthread_poll_cpu) {
            super::uring_probe::check_sqpoll_cpu(cpu)?;
        }
        // SQPOLL rings are entered by the kernel's thread: keep the caller's flags only.
        let hipri = self.opts.hipri;
        let (sqpoll, sqpoll_cpu) = (self.opts.sqthread_poll, self.opts.sqthread_poll_cpu);
        let cq = (2 * self.depth as u32).next_power_of_two();
        let (ring, deferred) = build_ring(self.depth.next_power_of_two() as u32, !sqpoll, |b| {
            if hipri {
                b.setup_iopoll();
            }
            if sqpoll {
                b.setup_sqpoll(1000);
                if let Some(cpu) = sqpoll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            b.setup_cqsize(cq);
        })
        .map_err(|e| setup_error(e, &self.opts))?;
        self.deferred = deferred;
        let mut probe = Probe::new();
        let probed = ring.submitter().register_probe(&mut probe).is_ok();
        let has = |op: u8| probed && probe.is_supported(op);
        self.nonvectored = match self.opts.nonvectored {
            -1 => has(opcode::Read::CODE) && has(opcode::Write::CODE),
            0 => false,
            _ => {
                if probed && !(has(opcode::Read::CODE) && has(opcode::Write::CODE)) {
                    return Err(missing_opcode("nonvectored=1", "IORING_OP_READ/WRITE"));
                }
                true
            }
        };
        if self.opts.fixedbufs && probed && !has(opcode::ReadFixed::CODE) {
            return Err(missing_opcode("fixedbufs", "IORING_OP_READ_FIXED"));
        }
        // Registered buffers only when the job asks (fixedbufs), as fio: the kernel builds a
        // registered buffer's bios page by page, never merging physically contiguous pages
        // into one segment as it does for plain buffers, so the device saw other request
        // sizes (a 8 MiB read: 64 requests of exactly 512 KiB, where fio's are a mix up to
        // ~690 KiB; tests/engines/device_fio_diff.rs). Registered files only spare the kernel a
        // descriptor lookup: taken whenever the kernel allows (polled SQ threads keep fio's
        // way), an error only when the job asked for them (registerfiles).
        if self.opts.fixedbufs {
            let bufs: Vec<libc::iovec> = (0..self.depth)
                .map(|i| libc::iovec {
                    // SAFETY: slot i's buffer lies inside the worker's region.
                    iov_base: unsafe { s.buf_base.add(i * s.slot_len) }.cast(),
                    iov_len: s.slot_len,
                })
                .collect();
            // SAFETY: the buffers live as long as the worker, which outlives the ring.
            match unsafe { ring.submitter().register_buffers(&bufs) } {
                Ok(()) => self.fixed = true,
                Err(e) if self.opts.fixedbufs => return Err(register_error("fixedbufs", e)),
                Err(_) => {}
            }
        }
        if self.opts.registerfiles || (!sqpoll && !s.files.is_empty()) {
            let fds: Vec<i32> = s.files.iter().map(|f| f.fd).collect();
            match ring.submitter().register_files(&fds) {
                Ok(()) => self.reg_files = true,
                Err(e) if self.opts.registerfiles => {
                    return Err(register_error("registerfiles", e))
                }
                Err(_) => {}
            }
        }
        self.enter_fd = ring.as_raw_fd();
        if !sqpoll {
            if let Some(index) = register_ring_fd(self.enter_fd) {
                self.enter_fd = index;
                self.enter_flags = ENTER_REGISTERED_RING;
            }
        }
        self.iovecs = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0
            };
            self.depth
        ];
        self.events = vec![Completion { slot: 0, result: 0 }; 2 * self.depth];
        self.ring = Some(ring);
        Ok(())
    }

    fn file_opened(&mut self, index: usize, file: super::EngineFile) -> io::Result<()> {
        self.update_registered(index, file.fd)
    }

    fn file_closing(&mut self, index: usize) {
        let _ = self.update_registered(index, -1);
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.staged + self.in_kernel >= self.depth {
            return Ok(Queued::Busy);
        }
        let rw_flags = match io.op {
            Op::Rw(Ddir::Write) => self.rw_flags | self.opts.write_flags,
            _ => self.rw_flags,
        };
        // cmdprio: this I/O's priority (0, the default, without it).
        let prio = match (&mut self.cmdprio, io.op) {
            (Some(c), Op::Rw(d)) => c.pick(d, io.len),
            _ => 0,
        };
        io.prio = prio;
        let slot = io.slot as usize;
        let len = io.len as u32;
        macro_rules! with_fd {
            ($build:expr) => {
                if self.reg_files {
                    let fd = types::Fixed(io.file);
                    $build(fd)
                } else {
                    let fd = types::Fd(io.fd);
                    $build(fd)
                }
            };
        }
        let entry: squeue::Entry = match io.op {
            Op::Rw(Ddir::Trim) => {
                io.result = super::discard(io.fd, io.offset, io.len);
                return Ok(Queued::Completed);
            }
            Op::Sync {
                kind: SyncKind::Range(flags),
            } => with_fd!(|fd| opcode::SyncFileRange::new(fd, io.len as u32)
                .offset(io.offset)
                .flags(flags)
                .build()),
            Op::Sync { kind } => {
                let flags = if kind == SyncKind::Fdatasync {
                    types::FsyncFlags::DATASYNC
                } else {
                    types::FsyncFlags::empty()
                };
                with_fd!(|fd| opcode::Fsync::new(fd).flags(flags).build())
            }
            // With fixedbufs, always the registered buffer, as fio.
            Op::Rw(d) if self.fixed => {
                if d == Ddir::Read {
                    with_fd!(|fd| opcode::ReadFixed::new(fd, io.buf, len, slot as u16)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                } else {
                    with_fd!(|fd| opcode::WriteFixed::new(fd, io.buf, len, slot as u16)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                }
            }
            Op::Rw(d) if self.nonvectored => {
                if d == Ddir::Read {
                    with_fd!(|fd| opcode::Read::new(fd, io.buf, len)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                } else {
                    with_fd!(|fd| opcode::Write::new(fd, io.buf, len)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                }
            }
            Op::Rw(d) => {
                self.iovecs[slot] = libc::iovec {
                    iov_base: io.buf.cast(),
                    iov_len: io.len,
                };
                let iov = &self.iovecs[slot] as *const libc::iovec;
                if d == Ddir::Read {
                    with_fd!(|fd| opcode::Readv::new(fd, iov, 1)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                } else {
                    with_fd!(|fd| opcode::Writev::new(fd, iov, 1)
                        .offset(io.offset)
                        .rw_flags(rw_flags)
                        .ioprio(prio)
                        .build())
                }
            }
        };
        let mut entry = entry.user_data(io.slot as u64);
        if self.opts.force_async > 0 {
            self.prepped += 1;
            if self.prepped == self.opts.force_async {
                self.prepped = 0;
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        let sqpoll = self.opts.sqthread_poll;
        // SAFETY: the buffer and iovec stay valid until the completion is reaped: they
        // belong to the pool slot, which the worker does not reuse before then.
        if !unsafe { push_entry(self.ring(), &entry, sqpoll)? } {
            return Ok(Queued::Busy);
        }
        self.staged += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        if self.staged == 0 {
            return Ok(0);
        }
        let n = self.staged;
        loop {
            match self.enter(0, false) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.in_kernel > 0 => {
                    return Ok(0)
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    std::thread::sleep(std::time::Duration::from_micros(1))
                }
                Err(e) => return Err(e),
            }
        }
        // With SQPOLL the kernel thread takes entries on its own; once the ring accepted
        // them they count as submitted either way.
        self.in_kernel += n;
        self.staged = 0;
        Ok(n)
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let max = max.min(self.events.len()).max(1);
        let hipri = self.opts.hipri;
        let mut got = 0;
        let mut ran_deferred = false;
        loop {
            {
                let ring = self
                    .ring
                    .as_mut()
                    .expect("io_uring engine used before setup");
                let mut cq = ring.completion();
                cq.sync();
                for cqe in &mut cq {
                    self.events[got] = Completion {
                        slot: cqe.user_data() as u32,
                        result: cqe.result() as i64,
                    };
                    got += 1;
                    if got == max {
                        break;
                    }
                }
            }
            let want = if got >= min.max(usize::from(hipri && got == 0 && self.in_kernel > 0)) {
                // With deferred task work nothing reaches the completion ring until it is
                // entered with GETEVENTS: a poll that found nothing asks once, not waiting.
                if got > 0 || !self.deferred || ran_deferred || self.in_kernel == 0 {
                    break;
                }
                ran_deferred = true;
                0
            } else {
                min.saturating_sub(got).max(1)
            };
            match self.enter(want, true) {
                Ok(_) => {}
                // A stop (a signal, the watchdog's timeout) ends a wait on hung I/O.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) && crate::stop::terminating() => {
                    break
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {}
                Err(e) => return Err(e),
            }
        }
        self.in_kernel -= got;
        Ok(got)
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

pub const FIXEDBUFS: OptDef = opt(
    "fixedbufs",
    K::Bool,
    "Register I/O buffers with the kernel once",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const REGISTERFILES: OptDef = opt(
    "registerfiles",
    K::Bool,
    "Register files with the kernel once",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const SQTHREAD_POLL: OptDef = opt(
    "sqthread_poll",
    K::Bool,
    "Let a kernel thread poll the submission queue",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const SQTHREAD_POLL_CPU: OptDef = opt(
    "sqthread_poll_cpu",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "The CPU the kernel polling thread runs on",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const NONVECTORED: OptDef = opt(
    "nonvectored",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Use plain read/write commands instead of vectored ones",
)
.def("-1")
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

pub const FORCE_ASYNC: OptDef = opt(
    "force_async",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Mark every Nth I/O to be run asynchronously by the kernel",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd"]);

impl super::spec::Declared for Uring {
    type Opts = (UringOpts, Option<super::cmdprio::CmdprioOpts>);
    const SPECS: &'static [super::spec::Spec] = &[super::spec::Spec::new(
        "io_uring",
        "Linux io_uring",
        super::spec::Flags {
            atomic_writes: true,
            ..super::spec::Flags::ASYNC_FS
        },
    )
    .options(&[
        super::psync::HIPRI,
        super::cmdprio::CMDPRIO_PERCENTAGE,
        super::cmdprio::CMDPRIO_CLASS,
        super::cmdprio::CMDPRIO,
        super::cmdprio::CMDPRIO_BSSPLIT,
        super::cmdprio::CMDPRIO_HINT,
        FIXEDBUFS,
        REGISTERFILES,
        SQTHREAD_POLL,
        SQTHREAD_POLL_CPU,
        NONVECTORED,
        super::psync::UNCACHED,
        super::psync::NOWAIT,
        FORCE_ASYNC,
        super::refused::CMD_TYPE,
    ])];
    fn configure(
        _: &'static super::spec::Spec,
        r: &crate::defs::reader::Reader,
        job: &super::spec::JobFacts,
    ) -> Result<Self::Opts, crate::error::JobError> {
        let u = UringOpts {
            fixedbufs: r.bool(&FIXEDBUFS)?,
            registerfiles: r.bool(&REGISTERFILES)?,
            sqthread_poll: r.bool(&SQTHREAD_POLL)?,
            sqthread_poll_cpu: r.int(&SQTHREAD_POLL_CPU)?.map(|v| v as u32),
            hipri: r.bool(&HIPRI)?,
            nonvectored: r.num(&NONVECTORED)? as i32,
            force_async: r.num(&FORCE_ASYNC)? as u32,
            nowait: r.bool(&NOWAIT)?,
            uncached: if r.num(&UNCACHED)? != 0 && !job.direct {
                super::psync::uncached_flag(r.raw.release)
            } else {
                0
            },
            write_flags: if job.rwf_atomic {
                super::psync::RWF_ATOMIC
            } else {
                0
            },
        };
        Ok((u, super::cmdprio::CmdprioOpts::resolve(r)?))
    }
    fn build(o: &Self::Opts) -> Self {
        Uring::new(o.0).with_cmdprio(o.1.clone())
    }
    fn for_offload(o: &mut Self::Opts) {
        // Registered buffers would be the submitter's one slot, not the job's buffer of
        // the I/O at hand.
        o.0.fixedbufs = false;
    }
}
