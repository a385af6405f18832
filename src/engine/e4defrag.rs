//! e4defrag: ext4 online defragmentation as the job's I/O, as fio's e4defrag engine: each
//! write moves the blocks under its range into the file from a donor file
//! (EXT4_IOC_MOVE_EXT), which measures how ext4 reorganises a file in use. The donor
//! (`donorname`, under `directory`) is allocated once for the whole range, or with
//! `inplace=1` allocated before and truncated after each move. Reads and trims fail
//! with EINVAL, as in fio.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::rows::{DIRECTORY, FILESIZE, OFFSET};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::ffi::CString;
use std::io;

pub const DONORNAME: OptDef = opt(
    "donorname",
    K::Str,
    "File that donates blocks for defragmentation",
)
.cat(C::Engine)
.engines(&["e4defrag"]);

pub const INPLACE: OptDef = opt(
    "inplace",
    K::Int { min: 0, max: 1 },
    "Allocate and free the donor space at each step",
)
.cat(C::Engine)
.engines(&["e4defrag"])
.range(0, 1);

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = 0xC028_660F;

/// The kernel's `struct move_extent`.
#[repr(C)]
#[derive(Debug, Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// e4defrag's options, read once.
#[derive(Debug, Clone)]
pub struct E4defragOpts {
    donor: String,
    inplace: bool,
    /// The donor's preallocated range (without `inplace`): from the job's `offset` to
    /// the top of its `filesize`, as fio's.
    start: u64,
    end: u64,
}

/// The defragmenting engine.
pub struct E4defrag {
    o: E4defragOpts,
    donor_fd: libc::c_int,
    bsz: u64,
}

impl Drop for E4defrag {
    fn drop(&mut self) {
        if self.donor_fd >= 0 {
            // SAFETY: closes the donor this engine opened.
            unsafe { libc::close(self.donor_fd) };
        }
    }
}

impl E4defrag {
    /// Moves the extents under `io`'s range; bytes moved or -errno.
    fn defrag(&mut self, io: &IoUnit) -> i64 {
        let d = self.donor_fd;
        if self.o.inplace {
            // SAFETY: plain system call on the donor descriptor.
            if unsafe { libc::fallocate(d, 0, io.offset as i64, io.len as i64) } != 0 {
                return super::neg_errno(-1);
            }
        }
        let first = io.offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: d as u32,
            orig_start: first,
            donor_start: first,
            len: (io.offset + io.len as u64).div_ceil(self.bsz) - first,
            ..MoveExtent::default()
        };
        // SAFETY: the ioctl reads and updates the move_extent local of the kernel's layout.
        let r = unsafe { libc::ioctl(io.fd, EXT4_IOC_MOVE_EXT as _, &mut me as *mut MoveExtent) };
        let err = (r != 0).then(|| super::neg_errno(-1));
        let moved = (me.moved_len * self.bsz).min(io.len as u64);
        if self.o.inplace {
            // SAFETY: as above.
            unsafe { libc::ftruncate(d, 0) };
        }
        match err {
            Some(e) => e,
            // Nothing moved: the range lies beyond the end of the file.
            None if moved == 0 => -(libc::EINVAL as i64),
            None => moved as i64,
        }
    }
}

impl Engine for E4defrag {
    fn setup(&mut self, _: &Setup<'_>) -> io::Result<()> {
        let path = CString::new(self.o.donor.as_bytes())
            .map_err(|_| io::Error::other("e4defrag: donorname contains a NUL byte"))?;
        // SAFETY: opens a NUL-terminated path; the descriptor is this engine's.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("e4defrag: can't open donor file {}: {e}", self.o.donor),
            ));
        }
        self.donor_fd = fd;
        if !self.o.inplace {
            let len = self.o.end.saturating_sub(self.o.start);
            // SAFETY: plain system call on the donor descriptor.
            if unsafe { libc::fallocate(fd, 0, self.o.start as i64, len as i64) } != 0 {
                // The job fails with the call's errno, as fio's (EINVAL when no
                // filesize gives the range); say what was asked.
                let e = io::Error::last_os_error();
                eprintln!(
                    "iobench: e4defrag: allocating {len} bytes of donor {} failed \
                     (filesize= sets how many): {e}",
                    self.o.donor
                );
                return Err(e);
            }
        }
        // SAFETY: fstat fills the local.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes only `st`, which lives across the call.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.bsz = (st.st_blksize as u64).max(1);
        Ok(())
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        io.result = match io.op {
            Op::Rw(Ddir::Write) => self.defrag(io),
            Op::Sync { .. } => super::do_sync(io),
            Op::Rw(_) => -(libc::EINVAL as i64),
        };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for E4defrag {
    type Opts = E4defragOpts;
    const SPECS: &'static [Spec] =
        &[
            Spec::new("e4defrag", "ext4 online defragmentation", Flags::SYNC)
                .options(&[DONORNAME, INPLACE]),
        ];
    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<E4defragOpts, JobError> {
        let Some(name) = r.text(&DONORNAME).filter(|n| !n.is_empty()) else {
            return Err(r.invalid(
                &DONORNAME,
                "ioengine=e4defrag needs donorname= (the donor file)",
            ));
        };
        let donor = match r.text(&DIRECTORY) {
            Some(d) => format!("{d}/{name}"),
            None => name,
        };
        let end = match r.text(&FILESIZE) {
            Some(v) => {
                let hi = v.rsplit(['-', ':']).next().unwrap_or(&v).to_string();
                r.size_of(&hi, &FILESIZE)?
            }
            None => 0,
        };
        let start = match r.text(&OFFSET) {
            Some(v) if !v.trim_end().ends_with('%') => r.size_of(&v, &OFFSET)?,
            _ => 0,
        };
        Ok(E4defragOpts {
            donor,
            inplace: r.num(&INPLACE)? != 0,
            start,
            end,
        })
    }
    fn build(o: &E4defragOpts) -> Self {
        E4defrag {
            o: o.clone(),
            donor_fd: -1,
            bsz: 4096,
        }
    }
}
