//! psync: one pread/pwrite per I/O, fio's default engine; also pvsync (preadv/pwritev) and
//! pvsync2 (preadv2/pwritev2 with per-I/O RWF_* flags), which differ only in the syscall.

use super::spec::{Flags, JobFacts, Spec};
use super::{do_sync, neg_errno, Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::io;

/// Which positional syscall family to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PosMode {
    /// pread/pwrite.
    Plain,
    /// preadv/pwritev with one iovec.
    Vector,
    /// preadv2/pwritev2 with these RWF_* flags.
    Vector2(i32),
}

/// The positional synchronous engines.
#[derive(Debug)]
pub struct Psync {
    mode: PosMode,
    /// pvsync2 with RWF_HIPRI: the percentage of I/Os that keep the flag (fio's
    /// `hipri_percentage`), drawn per I/O from `coin`.
    hipri_percentage: u32,
    coin: u64,
    /// RWF_* flags only writes carry (RWF_ATOMIC under `atomic=1`), pvsync2.
    write_flags: i32,
}

/// RWF_HIPRI: poll for completion (needs a polled queue).
pub const RWF_HIPRI: i32 = 0x1;
/// RWF_NOWAIT: fail with EAGAIN rather than block.
pub const RWF_NOWAIT: i32 = 0x8;
/// What fio 3.33 sends for `uncached=1` (its RWF_UNCACHED, of a kernel patch that was not
/// merged as such): kernels since 6.11 read this bit as RWF_ATOMIC.
pub const RWF_UNCACHED_3_33: i32 = 0x40;
/// RWF_ATOMIC (Linux 6.11): a write the device does all or nothing of.
pub const RWF_ATOMIC: i32 = 0x40;
/// RWF_DONTCACHE (Linux 6.14): buffered I/O whose pages are dropped after; fio 3.40 and
/// later send it for `uncached=1`.
pub const RWF_DONTCACHE: i32 = 0x80;

/// The RWF_* bit `uncached=1` sends in the dialect of `release`: fio 3.33's 0x40 until
/// fio 3.40 made it RWF_DONTCACHE.
pub fn uncached_flag(release: crate::defs::FioRelease) -> i32 {
    if release >= crate::defs::FioRelease::V3_40 {
        RWF_DONTCACHE
    } else {
        RWF_UNCACHED_3_33
    }
}

impl Psync {
    pub fn new(mode: PosMode) -> Self {
        Psync {
            mode,
            hipri_percentage: 100,
            coin: 0x2545_f491_4f6c_dd1d,
            write_flags: 0,
        }
    }

    /// Adds `flags` to every write's RWF_* flags (pvsync2).
    pub fn with_write_flags(mut self, flags: i32) -> Self {
        self.write_flags = flags;
        self
    }

    /// Sends only `pct` percent of I/Os with RWF_HIPRI, chosen at random (pvsync2).
    pub fn with_hipri_percentage(mut self, pct: u32) -> Self {
        self.hipri_percentage = pct.min(100);
        self
    }

    /// The RWF_* flags of the next I/O: RWF_HIPRI dropped for the share of I/Os that
    /// `hipri_percentage` leaves out.
    #[inline]
    fn flags(&mut self, flags: i32) -> i32 {
        if flags & RWF_HIPRI == 0 || self.hipri_percentage >= 100 {
            return flags;
        }
        // xorshift64: a cheap, well-spread draw of 0..100 per I/O.
        self.coin ^= self.coin << 13;
        self.coin ^= self.coin >> 7;
        self.coin ^= self.coin << 17;
        if ((self.coin % 100) as u32) < self.hipri_percentage {
            flags
        } else {
            flags & !RWF_HIPRI
        }
    }
}

impl Engine for Psync {
    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let off = io.offset as libc::off_t;
        let iov = libc::iovec {
            iov_base: io.buf.cast(),
            iov_len: io.len,
        };
        let mode = match self.mode {
            PosMode::Vector2(f) => PosMode::Vector2(self.flags(f)),
            m => m,
        };
        // SAFETY: `io.buf` points to at least `io.len` bytes owned by the worker for the
        // duration of this call, and `io.fd` is an open descriptor.
        let r = unsafe {
            match (io.op, mode) {
                (Op::Rw(Ddir::Read), PosMode::Plain) => {
                    libc::pread(io.fd, iov.iov_base, io.len, off)
                }
                (Op::Rw(Ddir::Write), PosMode::Plain) => {
                    libc::pwrite(io.fd, iov.iov_base, io.len, off)
                }
                (Op::Rw(Ddir::Read), PosMode::Vector) => libc::preadv(io.fd, &iov, 1, off),
                (Op::Rw(Ddir::Write), PosMode::Vector) => libc::pwritev(io.fd, &iov, 1, off),
                (Op::Rw(Ddir::Read), PosMode::Vector2(f)) => libc::preadv2(io.fd, &iov, 1, off, f),
                (Op::Rw(Ddir::Write), PosMode::Vector2(f)) => {
                    libc::pwritev2(io.fd, &iov, 1, off, f | self.write_flags)
                }
                (Op::Rw(Ddir::Trim), _) => {
                    io.result = super::discard(io.fd, io.offset, io.len);
                    return Ok(Queued::Completed);
                }
                (Op::Sync { .. }, _) => {
                    io.result = do_sync(io);
                    return Ok(Queued::Completed);
                }
            }
        };
        io.result = neg_errno(r);
        Ok(Queued::Completed)
    }
}

pub const HIPRI: OptDef = opt(
    "hipri",
    K::Bool,
    "Poll for completions instead of waiting for interrupts",
)
.cat(C::Engine)
.engines(&["pvsync2", "sg", "io_uring", "io_uring_cmd"]);

pub const HIPRI_PERCENTAGE: OptDef = opt(
    "hipri_percentage",
    K::Int { min: 0, max: 100 },
    "Share of I/Os sent with the high-priority poll flag",
)
.def("100")
.cat(C::Engine)
.engines(&["pvsync2"])
.range(0, 100);

pub const UNCACHED: OptDef = opt(
    "uncached",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Ask for uncached buffered I/O",
)
.cat(C::Engine)
.engines(&["pvsync2", "io_uring", "io_uring_cmd"]);

pub const NOWAIT: OptDef = opt(
    "nowait",
    K::Bool,
    "Fail I/O that would block instead of waiting",
)
.cat(C::Engine)
.engines(&["pvsync2", "io_uring", "io_uring_cmd", "libaio"]);

/// psync's, pvsync's and pvsync2's options, read once.
#[derive(Debug, Clone, Copy)]
pub struct PsyncOpts {
    mode: PosMode,
    hipri_percentage: u32,
    write_flags: i32,
}

impl super::spec::Declared for Psync {
    type Opts = PsyncOpts;
    const SPECS: &'static [Spec] = &[
        Spec::new("psync", "pread and pwrite", Flags::SYNC_FS),
        Spec::new("pvsync", "preadv and pwritev", Flags::SYNC_FS),
        Spec::new(
            "pvsync2",
            "preadv2 and pwritev2 with per-I/O flags",
            Flags {
                atomic_writes: true,
                ..Flags::SYNC_FS
            },
        )
        .options(&[HIPRI, HIPRI_PERCENTAGE, UNCACHED, NOWAIT]),
    ];
    fn configure(spec: &'static Spec, r: &Reader, job: &JobFacts) -> Result<PsyncOpts, JobError> {
        let mode = match spec.name {
            "psync" => PosMode::Plain,
            "pvsync" => PosMode::Vector,
            _ => {
                let mut f = 0;
                if r.bool(&HIPRI)? {
                    f |= RWF_HIPRI;
                }
                if r.bool(&NOWAIT)? {
                    f |= RWF_NOWAIT;
                }
                if r.num(&UNCACHED)? != 0 && !job.direct {
                    f |= uncached_flag(r.raw.release);
                }
                PosMode::Vector2(f)
            }
        };
        Ok(PsyncOpts {
            mode,
            hipri_percentage: r.num(&HIPRI_PERCENTAGE)?.clamp(0, 100) as u32,
            write_flags: if job.rwf_atomic { RWF_ATOMIC } else { 0 },
        })
    }
    fn build(o: &PsyncOpts) -> Self {
        Psync::new(o.mode)
            .with_hipri_percentage(o.hipri_percentage)
            .with_write_flags(o.write_flags)
    }
}
