//! psync: one pread/pwrite per I/O, fio's default engine; also pvsync (preadv/pwritev) and
//! pvsync2 (preadv2/pwritev2 with per-I/O RWF_* flags), which differ only in the syscall.

use super::{do_sync, neg_errno, Caps, Engine, IoUnit, Op, Queued};
use crate::job::Ddir;
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
}

/// RWF_HIPRI: poll for completion (needs a polled queue).
pub const RWF_HIPRI: i32 = 0x1;
/// RWF_NOWAIT: fail with EAGAIN rather than block.
pub const RWF_NOWAIT: i32 = 0x8;
/// RWF_UNCACHED: buffered I/O that drops its pages after (kernels that have it).
pub const RWF_UNCACHED: i32 = 0x40;

impl Psync {
    pub fn new(mode: PosMode) -> Self {
        Psync { mode }
    }
}

impl Engine for Psync {
    fn caps(&self) -> Caps {
        Caps {
            sync: true,
            ..Caps::default()
        }
    }

    #[inline]
    fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let off = io.offset as libc::off_t;
        let iov = libc::iovec {
            iov_base: io.buf.cast(),
            iov_len: io.len,
        };
        // SAFETY: `io.buf` points to at least `io.len` bytes owned by the worker for the
        // duration of this call, and `io.fd` is an open descriptor.
        let r = unsafe {
            match (io.op, self.mode) {
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
                    libc::pwritev2(io.fd, &iov, 1, off, f)
                }
                (Op::Rw(Ddir::Trim), _) => {
                    io.result = -(libc::EOPNOTSUPP as i64);
                    return Ok(Queued::Completed);
                }
                (Op::Sync { data_only }, _) => {
                    io.result = do_sync(io.fd, data_only);
                    return Ok(Queued::Completed);
                }
            }
        };
        io.result = neg_errno(r);
        Ok(Queued::Completed)
    }
}
