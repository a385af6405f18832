//! `lockfile`: serialising the job's I/O on a file it shares, as fio's lock around each
//! queue call does (`exclusive`: one I/O at a time; `readwrite`: many reads or one
//! write). iobench takes a `flock(2)` lock on its open file, so clones in other
//! processes and threads (each has its own open file), and other programs that flock
//! the file, are held off too; it works on files opened read-only. Only a job that asks
//! pays the two `flock` calls per I/O.

#![warn(missing_docs, clippy::cast_possible_truncation)]

use crate::defs::Ddir;
use crate::job::files::LockMode;
use std::io;
use std::os::fd::RawFd;

/// Waits for the lock an I/O of `ddir` on `fd` needs under `mode` (none for `none`, or
/// for a descriptor the worker does not hold).
#[inline(always)]
pub fn lock(mode: LockMode, fd: RawFd, ddir: Ddir) -> io::Result<()> {
    if mode == LockMode::None {
        return Ok(());
    }
    let op = match mode {
        LockMode::ReadWrite if ddir == Ddir::Read => libc::LOCK_SH,
        _ => libc::LOCK_EX,
    };
    flock(fd, op)
}

/// Releases what [`lock`] took.
#[inline(always)]
pub fn unlock(mode: LockMode, fd: RawFd) -> io::Result<()> {
    if mode == LockMode::None {
        return Ok(());
    }
    flock(fd, libc::LOCK_UN)
}

/// Takes (waiting for it) or drops a lock on `fd`'s open file.
#[inline(never)]
fn flock(fd: RawFd, op: libc::c_int) -> io::Result<()> {
    if fd < 0 {
        return Ok(());
    }
    loop {
        // SAFETY: flock takes a descriptor and an operation; no memory is passed.
        if unsafe { libc::flock(fd, op) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        // A signal (SIGINT) interrupts the wait: the worker's loop sees the stop.
        if e.raw_os_error() != Some(libc::EINTR) || super::terminating() {
            return Err(e);
        }
    }
}
