//! I/O engines. Each engine is its own module; the worker is generic over [`Engine`] so its
//! hot loop is monomorphised: no virtual call, no allocation and no lock per I/O. Engines say
//! what they can do through their [`spec::Flags`] instead of callers asking which engine
//! they are.
//!
//! The protocol mirrors fio's: the worker [`Engine::queue`]s I/O units one by one; a
//! synchronous engine completes each unit inside `queue`, an asynchronous one stages it and
//! the worker calls [`Engine::commit`] once a submit batch is ready, then
//! [`Engine::getevents`] to reap between `min` and `max` completions, read back one by one
//! with [`Engine::event`]. Units are named by their slot in the worker's pool, so engines
//! carry only a `u32` as user data.

pub mod cmdprio;
pub mod cpuio;
pub mod dirops;
pub mod e4defrag;
pub mod exec;
pub mod falloc;
pub mod fileops;
pub mod ftruncate;
pub mod http;
pub mod http_sigv4;
pub mod libaio;
pub mod mmap;
pub mod mtd;
pub mod nbd;
pub mod net;
pub mod null;
pub mod offload;
pub mod posixaio;
pub mod psync;
pub mod refused;
pub mod registry;
pub mod sg;
pub mod spec;
pub mod splice;
pub mod sync;
pub mod uring;
pub mod uring_cmd;
pub mod uring_probe;

pub use registry::EngineConfig;

use crate::defs::Ddir;
use std::io;
use std::os::fd::RawFd;

/// What the kind of operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Rw(Ddir),
    /// A sync of the unit's file (fio's DDIR_SYNC, DDIR_DATASYNC, DDIR_SYNC_FILE_RANGE):
    /// the worker hands every sync to the engine, so an engine with its own notion of
    /// durability (nbd's flush) gets to do it.
    Sync {
        kind: SyncKind,
    },
}

/// Which sync an [`Op::Sync`] unit asks for, and which system call a sync uses: fsync,
/// fdatasync, or sync_file_range with these flags over the unit's `offset` and `len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    Fsync,
    Fdatasync,
    /// sync_file_range with these flags, over the range written since the last sync.
    Range(u32),
    /// `fsync_on_close` at a replayed log's `close`: an fsync left out of the statistics
    /// that does not count as the last operation being a sync, skipped right after one.
    OnClose,
}

impl SyncKind {
    /// The action name fio writes in an iolog.
    pub fn log_name(self) -> &'static str {
        match self {
            SyncKind::Fsync | SyncKind::OnClose => "sync",
            SyncKind::Fdatasync => "datasync",
            SyncKind::Range(_) => "sync_file_range",
        }
    }
}

/// One I/O request, owned by the worker's pool; `slot` names it to the engine.
#[derive(Debug, Clone, Copy)]
pub struct IoUnit {
    pub slot: u32,
    pub op: Op,
    /// Index in the worker's file list.
    pub file: u32,
    pub fd: RawFd,
    pub offset: u64,
    pub len: usize,
    pub buf: *mut u8,
    /// Bytes transferred, or a negative errno, once completed.
    pub result: i64,
    /// When the worker took the unit (fio's start_time), ns on the run clock.
    pub start_ns: u64,
    /// When it was handed to the kernel (fio's issue_time).
    pub issue_ns: u64,
    /// The pass (loop) of the job it belongs to, counted from 0 (file engines act once per
    /// file per pass).
    pub pass: u32,
    /// The I/O priority the engine sent it with (cmdprio; class << 13 | level).
    pub prio: u16,
}

impl IoUnit {
    /// An unused unit for slot `slot` with buffer `buf`.
    pub fn new(slot: u32, buf: *mut u8) -> Self {
        IoUnit {
            slot,
            op: Op::Rw(Ddir::Read),
            file: 0,
            fd: -1,
            offset: 0,
            len: 0,
            buf,
            result: 0,
            start_ns: 0,
            issue_ns: 0,
            pass: 0,
            prio: 0,
        }
    }
}

/// The outcome of queueing one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Done: `result` is set (synchronous engines).
    Completed,
    /// Staged; it will come back through `getevents`.
    Queued,
    /// No room now: reap some completions and try again.
    Busy,
}

/// One finished I/O reported by `event`.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
}

/// Why a request an engine measured failed (the http engine's `http_errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjFailure {
    /// The server answered with a status the request does not accept.
    Status(u16),
    /// No answer in time.
    Timeout,
    /// The connection was reset, refused or closed before an answer.
    Reset,
    /// Anything else (TLS, a malformed answer, a body cut short).
    Other,
}

/// One request an engine timed itself: the classes it belongs to (indices into the
/// operations, the [`ObjLayout`]'s size classes and endpoints), its outcome and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjSample {
    /// GET, PUT, HEAD, LIST, DELETE (0-4), or a multipart stage: 5 a part, 6 a whole
    /// multipart upload.
    pub op: u8,
    pub size: u16,
    pub endpoint: u16,
    pub fail: Option<ObjFailure>,
    pub bytes: u64,
    /// From the request's start to its last response byte.
    pub lat_ns: u64,
    /// From the request's start to the response's first byte.
    pub ttfb_ns: u64,
}

/// What an engine's own measurements are split by, with the names the reports give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjLayout {
    /// Failed requests are counted by status.
    pub errors: bool,
    /// Time to first byte is reported.
    pub ttfb: bool,
    /// Object-size classes (empty: none).
    pub sizes: Vec<String>,
    /// Endpoints (one: reported as a whole).
    pub endpoints: Vec<String>,
    /// Multipart uploads' parts and whole objects are reported.
    pub multipart: bool,
}

/// How an I/O that failed in the queue call of an engine reporting its own failures was
/// reported there (fio's engines that set the unit's error themselves and print no
/// `io_u error` line: mtd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueFailure {
    /// The engine named the failing call, as fio's engine does (its `td_verror`): the
    /// job's error is `errno`, worded `file:SITE, func=FUNC, error=…`.
    Named {
        errno: i32,
        site: &'static str,
        func: &'static str,
    },
    /// The engine set the error without a word: fio's queue call names it
    /// (`td_io_queue`).
    Silent,
}

/// One open file as the engine sees it (for registration or mapping).
#[derive(Debug, Clone, Copy)]
pub struct EngineFile {
    pub fd: RawFd,
    pub size: u64,
    pub writable: bool,
}

/// What an engine gets to set itself up, once, before the first I/O.
pub struct Setup<'a> {
    pub depth: u32,
    pub files: &'a [EngineFile],
    /// The files' names, in the same order (for engines that act on names, not descriptors).
    pub names: &'a [String],
    /// The worker's buffers: one region, `slot_len` bytes per pool slot, slot i at
    /// `buf_base + i * slot_len`.
    pub buf_base: *mut u8,
    pub slot_len: usize,
}

/// The interface every engine implements. Implementations are used through generics only.
pub trait Engine: Send {
    /// Called once with the open files and buffers, before any I/O.
    fn setup(&mut self, _s: &Setup<'_>) -> io::Result<()> {
        Ok(())
    }
    /// A file was opened (again) after setup, as file `index`: engines that keep
    /// something per file (positions, mappings, registered descriptors) take it up. Only
    /// called when the worker opens files as it goes (`openfiles`, `unlink_each_loop`).
    fn file_opened(&mut self, _index: usize, _file: EngineFile) -> io::Result<()> {
        Ok(())
    }
    /// File `index` is about to be closed (no I/O of it is in flight): drop what the
    /// engine keeps for it.
    fn file_closing(&mut self, _index: usize) {}
    /// Stages (or, for a synchronous engine, performs) one I/O.
    ///
    /// # Safety
    ///
    /// The engine hands `io.buf` to the kernel (or reads and writes it itself, now or
    /// from another thread), so for a read or write (`Op::Rw` of `Read` or `Write`):
    /// - `io.buf` must be valid for `io.len` bytes: writable for a read, readable for a
    ///   write;
    /// - that memory must stay allocated, unmoved and untouched by the caller until the
    ///   unit completes: when `queue` returns [`Queued::Completed`], or when `event`
    ///   yields the unit's slot after `getevents`;
    /// - `io.slot` must be below the queue depth the engine was set up for, and a slot
    ///   must not be queued again while it is in flight.
    ///
    /// Trims and syncs (`Op::Sync`) read no buffer; for them only the last rule applies.
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued>;
    /// True when `queue` would answer [`Queued::Busy`] now, whatever the I/O: the worker
    /// then reaps first instead of making up an I/O only to hold it back. Only ever true
    /// with I/Os in flight (the reap is what makes room).
    fn busy(&self) -> bool {
        false
    }
    /// Hands every staged I/O to the kernel; returns how many were submitted.
    fn commit(&mut self) -> io::Result<usize> {
        Ok(0)
    }
    /// Waits for at least `min` and reaps at most `max` completions; returns how many.
    fn getevents(&mut self, _min: usize, _max: usize) -> io::Result<usize> {
        Ok(0)
    }
    /// The `i`th completion of the last `getevents`.
    fn event(&self, _i: usize) -> Completion {
        Completion { slot: 0, result: 0 }
    }
    /// For `file_ops` engines: the latency of the file operation the last `queue` made, if
    /// it made one (taken once). It is the only latency such engines report.
    fn take_op_latency(&mut self) -> Option<u64> {
        None
    }
    /// For `file_ops` engines: the name of the call, for error messages.
    fn op_name(&self) -> &'static str {
        "io_u"
    }
    /// The pause the job takes after each I/O, when the engine sets it (cpuio sizes its
    /// idle time from its busy time); asked after every I/O that completes in `queue`.
    #[inline]
    fn think_us(&self) -> Option<u64> {
        None
    }
    /// The priorities the engine gives I/Os, default first, when it gives them per I/O
    /// (cmdprio): the job then reports each one's latency apart. Empty otherwise.
    fn ioprios(&self) -> Vec<u16> {
        Vec::new()
    }
    /// I/Os the engine learnt were lost in transit (net's UDP sequence numbers), taken
    /// once when the job ends; reported in the job's `dropped` counts, as fio does.
    fn take_dropped(&mut self) -> u64 {
        0
    }
    /// The classes of the engine's own measurements (the http engine's, under its
    /// iobench-only options), asked once after setup; `None` when it measures nothing.
    fn obj_layout(&self) -> Option<ObjLayout> {
        None
    }
    /// Hands the requests measured since the last call to `record`, oldest first, and
    /// forgets them; called after every completion when `obj_layout` said something.
    fn drain_obj_samples(&mut self, _record: &mut dyn FnMut(&ObjSample)) {}
    /// For an I/O that just failed: how the engine reported it, taken once; `None` for
    /// engines whose failures fio reports as failed I/Os (the `io_u error` line).
    #[cold]
    fn take_queue_failure(&mut self) -> Option<QueueFailure> {
        None
    }
    /// True when the engine has ended the job (cpuio's `exit_on_io_done`); asked when
    /// `queue` says busy.
    #[inline]
    fn finished(&self) -> bool {
        false
    }
    /// True when `queue` takes a periodic sync of this kind beside I/Os still in flight
    /// (io_uring's fsync opcode, posixaio's `aio_fsync`, libaio's in-line fsync with its
    /// submitted I/Os left in the kernel): the worker then queues it like any I/O, as fio
    /// 3.33 does, instead of draining first. The default (synchronous engines, nbd, null)
    /// drains and syncs through [`Engine::sync`].
    #[inline]
    fn queues_sync(&self, _kind: SyncKind) -> bool {
        false
    }
    /// Performs the sync unit `io` (an [`Op::Sync`]) through the engine's own queue and
    /// waits for it; returns its result (0 or a negative errno). Called with nothing else
    /// in flight, as fio drains before a sync, so the one completion reaped is this one.
    fn sync(&mut self, io: &mut IoUnit) -> io::Result<i64> {
        if !matches!(io.op, Op::Sync { .. }) {
            return Err(io::Error::other(
                "Engine::sync was given a unit that is not a sync",
            ));
        }
        // SAFETY: a sync unit reads and writes no buffer, and nothing else is in flight
        // (this method's contract), so its slot is free.
        match unsafe { self.queue(io) }? {
            Queued::Completed => return Ok(io.result),
            Queued::Busy => {
                return Err(io::Error::other(
                    "the engine refused a sync with nothing in flight",
                ))
            }
            Queued::Queued => {}
        }
        self.commit()?;
        loop {
            let n = self.getevents(1, 1)?;
            for i in 0..n {
                let c = self.event(i);
                if c.slot == io.slot {
                    io.result = c.result;
                    return Ok(c.result);
                }
            }
        }
    }
}

/// The result of a libc call returning -1/errno as a negative errno.
pub(crate) fn neg_errno(r: isize) -> i64 {
    if r < 0 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        r as i64
    }
}

/// Performs the sync unit `io` asks for on its descriptor, in line, as a completed
/// result (0 or a negative errno). A unit without a file (fd < 0) succeeds at once.
pub(crate) fn do_sync(io: &IoUnit) -> i64 {
    let Op::Sync { kind } = io.op else {
        return -(libc::EINVAL as i64);
    };
    if io.fd < 0 {
        return 0;
    }
    // SAFETY: plain syscalls on a descriptor the worker keeps open.
    let r = unsafe {
        match kind {
            SyncKind::Fsync | SyncKind::OnClose => libc::fsync(io.fd),
            SyncKind::Fdatasync => libc::fdatasync(io.fd),
            SyncKind::Range(flags) => {
                libc::sync_file_range(io.fd, io.offset as i64, io.len as i64, flags)
            }
        }
    };
    neg_errno(r as isize)
}

/// A trim (discard) of `len` bytes at `offset`, done in line as fio does on Linux: the
/// block layer's BLKDISCARD ioctl, whatever the target. A regular file therefore fails
/// with ENOTTY, exactly as under fio. Returns the bytes trimmed or `-errno`.
pub(crate) fn discard(fd: RawFd, offset: u64, len: usize) -> i64 {
    /// `_IO(0x12, 119)`: discard a byte range of a block device.
    const BLKDISCARD: libc::c_ulong = 0x1277;
    let range: [u64; 2] = [offset, len as u64];
    // SAFETY: BLKDISCARD reads two u64s (start, length) from the pointer, which points to
    // a live local array of exactly that shape.
    let r = unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) };
    if r == 0 {
        len as i64
    } else {
        neg_errno(-1)
    }
}
