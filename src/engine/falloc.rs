//! falloc: each I/O is a fallocate(2) of its range, as fio's falloc engine does: a read
//! allocates without changing the file size (FALLOC_FL_KEEP_SIZE), a write allocates and
//! extends, a trim punches a hole. It measures a file system's block allocator. Files are
//! opened read-write (and created) whatever the job's direction, as fio opens them.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::error::JobError;
use std::io;

/// The fallocate engine.
#[derive(Debug, Default)]
pub struct Falloc;

impl Engine for Falloc {
    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let mode = match io.op {
            Op::Rw(Ddir::Read) => libc::FALLOC_FL_KEEP_SIZE,
            Op::Rw(Ddir::Write) => 0,
            Op::Rw(Ddir::Trim) => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            Op::Sync { .. } => {
                io.result = super::do_sync(io);
                return Ok(Queued::Completed);
            }
        };
        // SAFETY: a plain system call on a descriptor the worker keeps open.
        let r = unsafe {
            libc::fallocate(io.fd, mode, io.offset as libc::off_t, io.len as libc::off_t)
        };
        io.result = if r == 0 {
            io.len as i64
        } else {
            super::neg_errno(-1)
        };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for Falloc {
    type Opts = ();
    const SPECS: &'static [Spec] = &[Spec::new(
        "falloc",
        "allocates and punches file space with fallocate",
        Flags {
            opens_rdwr: true,
            ..Flags::SYNC_FS
        },
    )];
    fn configure(_: &'static Spec, _: &Reader, _: &JobFacts) -> Result<(), JobError> {
        Ok(())
    }
    fn build(_: &()) -> Self {
        Falloc
    }
}
