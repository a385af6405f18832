//! psync: one pread/pwrite per I/O, the simplest engine and fio's default.

use super::{Caps, Engine, IoUnit, Queued};
use crate::job::Ddir;
use std::io;

/// The pread/pwrite engine.
#[derive(Debug, Default)]
pub struct Psync;

impl Engine for Psync {
    fn caps(&self) -> Caps {
        Caps { sync: true }
    }

    fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        // SAFETY: `io.buf` points to a buffer of at least `io.len` bytes owned by the worker
        // for the duration of this call, and `io.fd` is an open descriptor.
        let r = unsafe {
            match io.ddir {
                Ddir::Read => libc::pread(io.fd, io.buf.cast(), io.len, io.offset as libc::off_t),
                Ddir::Write => libc::pwrite(io.fd, io.buf.cast(), io.len, io.offset as libc::off_t),
                Ddir::Trim => return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            }
        };
        io.result = if r < 0 {
            -(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as i64)
        } else {
            r as i64
        };
        Ok(Queued::Completed)
    }
}
