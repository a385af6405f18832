//! How an engine describes itself: each engine's own file declares, once, the names it
//! answers to, what it can do ([`Flags`]), its options (rows of the option table) and how
//! its typed options are read and the engine built ([`Declared`]). The registry, the
//! option table's engine rows and `--enghelp` are all derived from these declarations, and
//! code outside `engine/` asks flags, never which engine it is.

use crate::defs::reader::Reader;
use crate::defs::OptDef;
use crate::error::JobError;

/// When fio counts a loop's bytes against `size` only for I/O that was queued (rather than
/// completed in the queue call), a loop of an engine that completes in its queue call ends
/// only when its files are done. See `gen::config`'s `pass_limited`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueCompletion {
    /// Every I/O completes inside the queue call (fio's synchronous engines).
    Always,
    /// I/O is queued and reaped later (asynchronous engines, vsync's merging queue).
    Never,
    /// Completes in the queue call at iodepth 1 only (null).
    AtDepthOne,
}

/// What an engine can do and what the runner must (not) do for it, declared once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    /// A synchronous engine: completes each I/O inside `queue`, so iodepth is 1 whatever
    /// the job says (`job::exec` caps it, the one place that does). null is not one, but
    /// behaves as one at depth 1: ask [`Flags::sync_at`] for the engine as set up.
    pub sync: bool,
    /// Touches no file data: files are neither laid out nor sized from disk, and the I/O
    /// scheduler is left alone (fio's "diskless" engines).
    pub diskless: bool,
    /// Its files are not real: they reach as far as the job's I/O does and nothing is ever
    /// written to them (null), so `--readonly` has nothing to refuse.
    pub fake_files: bool,
    /// Whether each I/O completes in the queue call, for fio's loop accounting.
    pub completes_in_queue: QueueCompletion,
    /// Opens (or otherwise reaches) its targets itself: the runner opens no file.
    pub opens_own_files: bool,
    /// Creates the job's files as its timed operation (they are this run's to unlink).
    pub creates_files: bool,
    /// Its target is sized by asking the engine ([`Declared::target_size`]), not a file.
    pub sized_by_engine: bool,
    /// Times its own operation inside the engine, so `io_submit_mode=offload` (whose
    /// submitters' timing would not reach the job) is refused.
    pub no_offload: bool,
    /// Moves no data through the job's files at all (cpuio, exec): no file is planned.
    pub no_io: bool,
    /// Changes its files whatever the job's direction (falloc: a read allocates), so the
    /// runner opens them read-write and creates them.
    pub opens_rdwr: bool,
    /// Reports rates in bits unless the job says otherwise (fio's FIO_BIT_BASED: net).
    pub bit_based: bool,
    /// Its "I/O" is a call on a file name (create, stat, unlink): an I/O counts as bytes
    /// only and the call's latency is its one sample (filecreate, filestat, filedelete).
    pub file_ops: bool,
    /// Gives each request `io_timeout` as its own deadline and fails the one that misses
    /// it as the engine's own error (the http engine: a timeout, counted by
    /// `http_errors`). The watchdog then stays a backstop, [`DEADLINE_GRACE_US`] later, so
    /// the engine's deadline always acts first.
    pub own_deadline: bool,
    /// Its targets are directories (dircreate, dirstat, dirdelete): a job's file name that
    /// is a directory is its target, not an error.
    pub dir_ops: bool,
    /// Takes `end_syncfs` (fio 3.42's FIO_SYNCFS or FIO_ASYNCIO_SYNC_SYNCFS): the file
    /// engines whose writes reach a file system; a job of another engine is refused.
    pub syncfs: bool,
    /// Sends RWF_ATOMIC writes for `atomic=1` in the dialects of fio 3.38 and later (fio's
    /// FIO_ATOMICWRITES: pvsync2, libaio, io_uring); a job of another engine is refused.
    pub atomic_writes: bool,
}

/// How much later than `io_timeout` the watchdog acts for an engine with
/// [`Flags::own_deadline`], in microseconds (a second).
pub const DEADLINE_GRACE_US: u64 = 1_000_000;

impl Flags {
    /// True when the job's I/O reaches no local block device (no disk statistics are
    /// taken for it): diskless engines, and those whose target is remote (nbd).
    pub const fn no_local_disk(&self) -> bool {
        self.diskless || self.sized_by_engine
    }

    /// Whether the engine, set up at queue depth `depth`, completes each I/O inside
    /// `queue`: a synchronous engine always, null at depth 1. The worker then publishes
    /// an I/O to the watchdog as it is queued and stamps its issue time there, not at
    /// commit.
    pub const fn sync_at(&self, depth: u32) -> bool {
        self.sync || (matches!(self.completes_in_queue, QueueCompletion::AtDepthOne) && depth <= 1)
    }

    /// A file engine of fio's ordinary kind: synchronous, the runner opens its files.
    pub const SYNC: Flags = Flags {
        sync: true,
        diskless: false,
        fake_files: false,
        completes_in_queue: QueueCompletion::Always,
        opens_own_files: false,
        creates_files: false,
        sized_by_engine: false,
        no_offload: false,
        no_io: false,
        opens_rdwr: false,
        bit_based: false,
        file_ops: false,
        own_deadline: false,
        dir_ops: false,
        syncfs: false,
        atomic_writes: false,
    };
    /// [`Flags::SYNC`], taking `end_syncfs`.
    pub const SYNC_FS: Flags = Flags {
        syncfs: true,
        ..Flags::SYNC
    };
    /// [`Flags::ASYNC`], taking `end_syncfs` (the syncfs itself is a plain call).
    pub const ASYNC_FS: Flags = Flags {
        syncfs: true,
        ..Flags::ASYNC
    };
    /// An asynchronous file engine: the runner opens its files, I/O is reaped later.
    pub const ASYNC: Flags = Flags {
        sync: false,
        completes_in_queue: QueueCompletion::Never,
        ..Flags::SYNC
    };
}

/// One engine name: what `ioengine=` says, its `--enghelp` line, its flags and options.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    /// One line saying what the engine does (the docs and `--cmdhelp=ioengine`).
    pub help: &'static str,
    pub flags: Flags,
    /// The engine's options, in the order fio's `--enghelp=NAME` lists them.
    pub options: &'static [OptDef],
    /// `None` when iobench runs it; else why not and what it would need (the error a job
    /// naming it gets, and the README's list).
    pub refused: Option<&'static str>,
    /// Listed among `ioengine`'s choices (`--cmdhelp=ioengine`), as fio lists it.
    pub choice: bool,
}

impl Spec {
    /// A spec for an engine iobench runs.
    pub const fn new(name: &'static str, help: &'static str, flags: Flags) -> Self {
        Spec {
            name,
            help,
            flags,
            options: &[],
            refused: None,
            choice: true,
        }
    }
    /// Left out of `ioengine`'s choices, as fio leaves it out (ftruncate, filestat, …).
    pub const fn hidden(mut self) -> Self {
        self.choice = false;
        self
    }
    pub const fn options(mut self, options: &'static [OptDef]) -> Self {
        self.options = options;
        self
    }
    /// An engine fio has that iobench refuses, with the reason.
    pub const fn refused(name: &'static str, help: &'static str, why: &'static str) -> Self {
        Spec {
            name,
            help,
            flags: Flags::SYNC,
            options: &[],
            refused: Some(why),
            choice: true,
        }
    }
}

/// What an engine's option reader gets besides the job's raw options: values the job
/// resolves for everyone and some engines also need.
#[derive(Debug, Clone, Copy)]
pub struct JobFacts {
    /// direct=1 (or buffered=0).
    pub direct: bool,
    /// The madvise hint fadvise_hint and the pattern ask for, if any.
    pub madvise: Option<i32>,
    /// The job's iodepth as resolved for this engine.
    pub iodepth: u32,
    /// The job's `runtime` in microseconds (0: none).
    pub runtime_us: u64,
    /// `atomic=1` in a dialect of fio 3.38 or later, for a job that writes: its writes
    /// carry RWF_ATOMIC.
    pub rwf_atomic: bool,
}

/// An engine type: its names and how it is configured and built. Implemented in the
/// engine's own file; the registry's one line per engine type does the rest.
pub trait Declared: super::Engine + Sized + 'static {
    /// The engine's typed options, read once at job resolution.
    type Opts: Clone + std::fmt::Debug + Send + Sync + 'static;
    /// One spec per name this type answers to (sync and vsync are one type).
    const SPECS: &'static [Spec];
    /// Reads the options for the engine named by `spec` (one of [`Self::SPECS`]).
    fn configure(spec: &'static Spec, r: &Reader, job: &JobFacts) -> Result<Self::Opts, JobError>;
    /// Builds one engine (one per job clone, or per offload submitter).
    fn build(opts: &Self::Opts) -> Self;
    /// Adjusts the options for clone `clone` (0-based) of the job (net: port + clone).
    fn for_clone(_opts: &mut Self::Opts, _clone: u32) {}
    /// Adjusts the options for an offload submitter, which owns one slot of the buffers.
    fn for_offload(_opts: &mut Self::Opts) {}
    /// The size of a character device the job names, for engines that ask the device
    /// itself (sg's READ CAPACITY, io_uring_cmd's Identify Namespace), where other engines
    /// need `size=`; `None` when the engine does not.
    fn char_device_size(_opts: &Self::Opts, _path: &str) -> Option<std::io::Result<u64>> {
        None
    }
    /// The target's size, for engines with `sized_by_engine` (asked before workers start).
    fn target_size(_opts: &Self::Opts) -> std::io::Result<u64> {
        Err(std::io::Error::other(
            "this engine does not size its target",
        ))
    }
}
