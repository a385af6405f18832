//! mmap: each file is mapped into memory (shared) and an I/O is a copy between the
//! worker's buffer and the mapping, as fio's mmap engine does. A sync is an msync of the
//! file's mapping; with direct=1 each I/O's pages are written back (msync) and dropped
//! (madvise DONTNEED) right after the copy. When the whole file cannot be mapped at once,
//! a window around the I/O is mapped instead and moved when an I/O falls outside it.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, EngineFile, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::io;

/// The most bytes mapped at once over all files when whole files do not fit (fio's
/// choice for its fallback windows).
const WINDOW_TOTAL: u64 = 1 << 30;

/// One file's mapping.
#[derive(Debug, Clone, Copy)]
struct Map {
    ptr: *mut u8,
    /// File offset of `ptr`.
    off: u64,
    len: usize,
    file: EngineFile,
    /// True once mapping the whole file failed: use windows from then on.
    windowed: bool,
}

/// The memory-mapping engine.
pub struct Mmap {
    maps: Vec<Map>,
    prot: libc::c_int,
    direct: bool,
    /// Advice for the access pattern (MADV_SEQUENTIAL/RANDOM), or None.
    advice: Option<libc::c_int>,
    window: u64,
    /// `thp`: map privately and ask for transparent huge pages, as fio's mmap engine
    /// does with it (writes then stay in the mapping's private copy, as under fio).
    thp: bool,
}

// SAFETY: the mappings are owned by this value and used by one worker at a time.
unsafe impl Send for Mmap {}

impl Mmap {
    /// `direct`: write back and drop each I/O's pages (direct=1). `advice`: madvise
    /// hint for the whole mapping (fadvise_hint).
    pub fn new(direct: bool, advice: Option<libc::c_int>) -> Self {
        Mmap {
            maps: Vec::new(),
            prot: libc::PROT_READ,
            direct,
            advice,
            window: WINDOW_TOTAL,
            thp: false,
        }
    }

    /// Turns `thp` on or off.
    pub fn with_thp(mut self, thp: bool) -> Self {
        self.thp = thp;
        self
    }

    /// Maps `len` bytes of `m.file` from `off`, replacing any earlier mapping.
    fn map(&self, m: &mut Map, off: u64, len: usize) -> i32 {
        if !m.ptr.is_null() {
            // SAFETY: unmapping a mapping this engine made, with its length.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
            m.ptr = std::ptr::null_mut();
            m.len = 0;
        }
        if len == 0 {
            return libc::EINVAL;
        }
        // SAFETY: a fresh shared mapping of an open descriptor; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                self.prot,
                if self.thp {
                    libc::MAP_PRIVATE
                } else {
                    libc::MAP_SHARED
                },
                m.file.fd,
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::ENOMEM);
        }
        // SAFETY: advice on the mapping just made; failures are harmless and ignored.
        unsafe {
            if self.thp {
                libc::madvise(p, len, libc::MADV_HUGEPAGE);
            }
            if let Some(a) = self.advice {
                libc::madvise(p, len, a);
            }
            // Start with no pages resident, as fio does, so reads really reach the file.
            libc::madvise(p, len, libc::MADV_DONTNEED);
        }
        m.ptr = p.cast();
        m.off = off;
        m.len = len;
        0
    }

    /// Maps file `i` whole when it is open and not empty; windows from then on when
    /// that fails.
    fn map_whole(&mut self, i: usize) {
        let mut m = self.maps[i];
        let size = m.file.size as usize;
        if m.file.fd >= 0 && size > 0 && self.map(&mut m, 0, size) != 0 {
            m.windowed = true;
        }
        self.maps[i] = m;
    }

    /// The address of `len` bytes at `off` in file `f`, mapping as needed.
    #[inline]
    fn locate(&mut self, f: usize, off: u64, len: usize) -> Result<*mut u8, i32> {
        let mut m = self.maps[f];
        if !m.ptr.is_null() && off >= m.off && off + len as u64 <= m.off + m.len as u64 {
            // SAFETY: the range lies inside the mapping, checked just above.
            return Ok(unsafe { m.ptr.add((off - m.off) as usize) });
        }
        if !m.windowed {
            let whole = m.file.size.max(off + len as u64);
            if self.map(&mut m, 0, whole as usize) != 0 {
                m.windowed = true;
            }
        }
        if m.windowed {
            if len as u64 > self.window {
                self.maps[f] = m;
                return Err(libc::EINVAL);
            }
            let page = 4096u64;
            let start = off / page * page;
            let span = self.window.max(off + len as u64 - start);
            let e = self.map(&mut m, start, span as usize);
            if e != 0 {
                self.maps[f] = m;
                return Err(e);
            }
        }
        self.maps[f] = m;
        // SAFETY: the new mapping covers [off, off + len).
        Ok(unsafe { m.ptr.add((off - m.off) as usize) })
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        for m in &self.maps {
            if !m.ptr.is_null() {
                // SAFETY: unmapping what this engine mapped.
                unsafe { libc::munmap(m.ptr.cast(), m.len) };
            }
        }
    }
}

fn errno() -> i64 {
    -(io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

impl Engine for Mmap {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.prot = if s.files.iter().any(|f| f.writable) {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        self.window = WINDOW_TOTAL / s.files.len().max(1) as u64;
        self.maps = s
            .files
            .iter()
            .map(|&file| Map {
                ptr: std::ptr::null_mut(),
                off: 0,
                len: 0,
                file,
                windowed: false,
            })
            .collect();
        // Map each file now, so the first I/O does not pay for it.
        for i in 0..self.maps.len() {
            self.map_whole(i);
        }
        Ok(())
    }

    fn file_opened(&mut self, index: usize, file: super::EngineFile) -> io::Result<()> {
        if file.writable && file.fd >= 0 {
            // A file made afresh (unlink_each_loop) is empty: stores past its end would
            // fault, so it gets its full size first, as a laid-out file has.
            // SAFETY: fstat/ftruncate on the descriptor the worker just opened.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: fstat writes only `st`, which lives across the call.
            if unsafe { libc::fstat(file.fd, &mut st) } == 0
                && (st.st_mode & libc::S_IFMT) == libc::S_IFREG
                && (st.st_size as u64) < file.size
                // SAFETY: ftruncate takes a descriptor and a length; no memory is passed.
                && unsafe { libc::ftruncate(file.fd, file.size as libc::off_t) } != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(m) = self.maps.get_mut(index) {
            *m = Map {
                ptr: std::ptr::null_mut(),
                off: 0,
                len: 0,
                file,
                windowed: false,
            };
            self.map_whole(index);
        }
        Ok(())
    }

    fn file_closing(&mut self, index: usize) {
        if let Some(m) = self.maps.get_mut(index) {
            if !m.ptr.is_null() {
                // SAFETY: unmapping what this engine mapped; no I/O of it is in flight.
                unsafe { libc::munmap(m.ptr.cast(), m.len) };
            }
            m.ptr = std::ptr::null_mut();
            m.len = 0;
            m.file.fd = -1;
        }
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let f = io.file as usize;
        let ddir = match io.op {
            Op::Rw(d) => d,
            Op::Sync { .. } => {
                let m = self.maps[f];
                io.result = if m.ptr.is_null() {
                    0
                // SAFETY: msync over this engine's own mapping.
                } else if unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } != 0 {
                    errno()
                } else {
                    0
                };
                return Ok(Queued::Completed);
            }
        };
        if ddir == Ddir::Trim {
            io.result = super::discard(io.fd, io.offset, io.len);
            return Ok(Queued::Completed);
        }
        let at = match self.locate(f, io.offset, io.len) {
            Ok(p) => p,
            Err(e) => {
                io.result = -(e as i64);
                return Ok(Queued::Completed);
            }
        };
        // SAFETY: `at` covers `io.len` mapped bytes (locate) and `io.buf` is the slot's
        // buffer of at least `io.len` bytes; the two never overlap.
        unsafe {
            if ddir == Ddir::Read {
                std::ptr::copy_nonoverlapping(at, io.buf, io.len);
            } else {
                std::ptr::copy_nonoverlapping(io.buf, at, io.len);
            }
        }
        io.result = io.len as i64;
        if self.direct {
            // Not real direct I/O: write the pages back and drop them from the cache.
            let page = 4096usize;
            let a = at as usize / page * page;
            let l = at as usize + io.len - a;
            // SAFETY: [a, a + l) lies inside the mapping (page-aligned down from `at`,
            // and mappings start on page boundaries).
            unsafe {
                if libc::msync(a as *mut libc::c_void, l, libc::MS_SYNC) != 0 {
                    io.result = errno();
                }
                libc::madvise(a as *mut libc::c_void, l, libc::MADV_DONTNEED);
            }
        }
        Ok(Queued::Completed)
    }
}

pub const THP: OptDef = opt(
    "thp",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Ask for transparent huge pages on the mapping",
)
.cat(C::Engine)
.engines(&["mmap"]);

/// mmap's options, read once.
#[derive(Debug, Clone, Copy)]
pub struct MmapOpts {
    direct: bool,
    advice: Option<libc::c_int>,
    thp: bool,
}

impl super::spec::Declared for Mmap {
    type Opts = MmapOpts;
    const SPECS: &'static [Spec] = &[Spec::new(
        "mmap",
        "copies to and from a memory mapping of the file",
        Flags::SYNC,
    )
    .options(&[THP])];
    fn configure(_: &'static Spec, r: &Reader, job: &JobFacts) -> Result<MmapOpts, JobError> {
        Ok(MmapOpts {
            direct: job.direct,
            advice: job.madvise,
            thp: r.num(&THP)? != 0,
        })
    }
    fn build(o: &MmapOpts) -> Self {
        Mmap::new(o.direct, o.advice).with_thp(o.thp)
    }
}
