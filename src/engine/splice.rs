//! splice: moves data between the file and the I/O buffer through a pipe, as fio's splice
//! engine does: a read splices file pages into the pipe (64 KiB at a time) and copies them
//! out to the buffer; a write vmsplices the buffer into the pipe and splices the pipe into
//! the file. It measures the kernel's splice path against plain read/write.
//!
//! fio reads the pipe with vmsplice into a fresh anonymous mapping when the kernel allows
//! (leaving the I/O buffer untouched); iobench reads it into the buffer, so what a read
//! brings back is the file's data (and verifies).

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::error::JobError;
use std::io;

/// The most one splice call moves, as fio's SPLICE_DEF_SIZE.
const CHUNK: usize = 64 << 10;

/// The pipe the data goes through.
pub struct Splice {
    /// Read end, write end (-1 until setup).
    pipe: [libc::c_int; 2],
}

fn errno() -> i64 {
    super::neg_errno(-1)
}

impl Splice {
    /// File → pipe → buffer; bytes read or -errno.
    fn read(&mut self, io: &IoUnit) -> i64 {
        let mut off = io.offset as libc::loff_t;
        let mut done = 0usize;
        while done < io.len {
            let want = (io.len - done).min(CHUNK);
            let flags = if io.len - done > CHUNK {
                libc::SPLICE_F_MORE
            } else {
                0
            };
            // SAFETY: splices from the job's open descriptor into this engine's pipe; `off`
            // is a live local the kernel advances.
            let n = unsafe {
                libc::splice(
                    io.fd,
                    &mut off,
                    self.pipe[1],
                    std::ptr::null_mut(),
                    want,
                    flags,
                )
            };
            if n < 0 {
                let e = errno();
                if e == -(libc::EAGAIN as i64) || e == -(libc::ENODATA as i64) {
                    continue;
                }
                return e;
            }
            if n == 0 {
                break; // end of file: a short read
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: reads into the unit's buffer, within its `len` bytes.
                let r = unsafe { libc::read(self.pipe[0], io.buf.add(done).cast(), left) };
                if r <= 0 {
                    return if r < 0 { errno() } else { -(libc::EIO as i64) };
                }
                left -= r as usize;
                done += r as usize;
            }
        }
        done as i64
    }

    /// Buffer → pipe → file; bytes written or -errno.
    fn write(&mut self, io: &IoUnit) -> i64 {
        let mut off = io.offset as libc::loff_t;
        let mut done = 0usize;
        while done < io.len {
            let iov = libc::iovec {
                // SAFETY: within the unit's buffer.
                iov_base: unsafe { io.buf.add(done) }.cast(),
                iov_len: io.len - done,
            };
            // SAFETY: the kernel copies (or references) the buffer's pages into the pipe;
            // the buffer stays alive and unchanged until the splice below drains the pipe.
            let n = unsafe { libc::vmsplice(self.pipe[1], &iov, 1, 0) };
            if n < 0 {
                return errno();
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: splices from this engine's pipe into the job's descriptor.
                let w = unsafe {
                    libc::splice(self.pipe[0], std::ptr::null_mut(), io.fd, &mut off, left, 0)
                };
                if w <= 0 {
                    return if w < 0 { errno() } else { -(libc::EIO as i64) };
                }
                left -= w as usize;
            }
            done += n as usize;
        }
        done as i64
    }
}

impl Drop for Splice {
    fn drop(&mut self) {
        for fd in self.pipe {
            if fd >= 0 {
                // SAFETY: closes the pipe this engine made.
                unsafe { libc::close(fd) };
            }
        }
    }
}

impl Engine for Splice {
    fn setup(&mut self, _: &Setup<'_>) -> io::Result<()> {
        let mut p = [-1; 2];
        // SAFETY: pipe2 fills the two-element array.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.pipe = p;
        Ok(())
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        io.result = match io.op {
            Op::Rw(Ddir::Read) => self.read(io),
            Op::Rw(Ddir::Write) => self.write(io),
            Op::Rw(Ddir::Trim) => super::discard(io.fd, io.offset, io.len),
            Op::Sync { .. } => super::do_sync(io),
        };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for Splice {
    type Opts = ();
    const SPECS: &'static [Spec] = &[Spec::new(
        "splice",
        "moves data through a pipe with splice and vmsplice",
        Flags::SYNC,
    )];
    fn configure(_: &'static Spec, _: &Reader, _: &JobFacts) -> Result<(), JobError> {
        Ok(())
    }
    fn build(_: &()) -> Self {
        Splice { pipe: [-1; 2] }
    }
}
