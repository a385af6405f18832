//! sync and vsync: read/write (or readv/writev) at the file position, seeking first when the
//! position differs from where the last I/O on that descriptor ended, as fio does.

use super::spec::{Flags, JobFacts, QueueCompletion, Spec};
use super::{do_sync, neg_errno, Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::error::JobError;
use std::io;

/// The position-based synchronous engines.
#[derive(Debug)]
pub struct SyncRw {
    vector: bool,
    /// Where the last I/O left each file's position (u64::MAX: unknown).
    pos: Vec<u64>,
}

impl SyncRw {
    /// `vector`: use readv/writev (vsync) instead of read/write (sync).
    pub fn new(vector: bool) -> Self {
        SyncRw {
            vector,
            pos: Vec::new(),
        }
    }
}

impl Engine for SyncRw {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.pos = vec![u64::MAX; s.files.len()];
        Ok(())
    }

    fn file_opened(&mut self, index: usize, _file: super::EngineFile) -> io::Result<()> {
        // A new descriptor starts at offset 0, whatever the old one's position was.
        if let Some(p) = self.pos.get_mut(index) {
            *p = u64::MAX;
        }
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let ddir = match io.op {
            Op::Rw(d) => d,
            Op::Sync { .. } => {
                io.result = do_sync(io);
                return Ok(Queued::Completed);
            }
        };
        if ddir == Ddir::Trim {
            io.result = super::discard(io.fd, io.offset, io.len);
            return Ok(Queued::Completed);
        }
        let pos = &mut self.pos[io.file as usize];
        if *pos != io.offset {
            // SAFETY: lseek on an open descriptor.
            let r = unsafe { libc::lseek(io.fd, io.offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                io.result = neg_errno(-1);
                *pos = u64::MAX;
                return Ok(Queued::Completed);
            }
        }
        let iov = libc::iovec {
            iov_base: io.buf.cast(),
            iov_len: io.len,
        };
        // SAFETY: `io.buf` points to at least `io.len` bytes owned by the worker.
        let r = unsafe {
            match (ddir, self.vector) {
                (Ddir::Read, false) => libc::read(io.fd, iov.iov_base, io.len),
                (Ddir::Read, true) => libc::readv(io.fd, &iov, 1),
                (_, false) => libc::write(io.fd, iov.iov_base, io.len),
                (_, true) => libc::writev(io.fd, &iov, 1),
            }
        };
        io.result = neg_errno(r);
        *pos = if r >= 0 {
            io.offset + r as u64
        } else {
            u64::MAX
        };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for SyncRw {
    /// vsync (readv/writev) rather than sync.
    type Opts = bool;
    const SPECS: &'static [Spec] = &[
        Spec::new(
            "sync",
            "read and write at the current position",
            Flags::SYNC_FS,
        ),
        // vsync queues (to merge neighbours into one readv/writev), so fio counts its
        // loop's bytes as queued I/O.
        Spec::new(
            "vsync",
            "readv and writev",
            Flags {
                completes_in_queue: QueueCompletion::Never,
                ..Flags::SYNC_FS
            },
        ),
    ];
    fn configure(spec: &'static Spec, _: &Reader, _: &JobFacts) -> Result<bool, JobError> {
        Ok(spec.name == "vsync")
    }
    fn build(vector: &bool) -> Self {
        SyncRw::new(*vector)
    }
}
