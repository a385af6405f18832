//! ftruncate: each write truncates (or extends) the file to the write's offset, as fio's
//! ftruncate engine does, to measure how a file system resizes files. Reads and trims
//! fail with EINVAL, as in fio.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::error::JobError;
use std::io;

/// The truncating engine.
#[derive(Debug, Default)]
pub struct Ftruncate;

impl Engine for Ftruncate {
    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        io.result = match io.op {
            Op::Rw(Ddir::Write) => {
                // SAFETY: a plain system call on a descriptor the worker keeps open.
                let r = unsafe { libc::ftruncate(io.fd, io.offset as libc::off_t) };
                if r == 0 {
                    io.len as i64
                } else {
                    super::neg_errno(-1)
                }
            }
            Op::Sync { .. } => super::do_sync(io),
            Op::Rw(_) => -(libc::EINVAL as i64),
        };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for Ftruncate {
    type Opts = ();
    const SPECS: &'static [Spec] = &[Spec::new(
        "ftruncate",
        "each write truncates the file to its offset",
        Flags::SYNC_FS,
    )
    .hidden()];
    fn configure(_: &'static Spec, _: &Reader, _: &JobFacts) -> Result<(), JobError> {
        Ok(())
    }
    fn build(_: &()) -> Self {
        Ftruncate
    }
}
