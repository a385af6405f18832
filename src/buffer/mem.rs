//! Where a job's I/O buffers live (`iomem`/`mem`): heap, System V shared memory (optionally
//! in huge pages), or a private, shared or huge-page mapping (optionally of a file), placed
//! `iomem_align` bytes past a page boundary as fio places them. Allocated once per job
//! clone, before any I/O; nothing here runs per I/O.

use crate::job::buffers::{MemKind, MemOpts};
use std::io;
use std::path::PathBuf;

const PAGE: usize = 4096;

/// The pages fio 3.33 has faulted in by the time its first job forks (measured with the
/// `kmem/mm_page_alloc` tracepoint on Debian 12: about 4300 pages in its main process,
/// the relocated data of its libraries, its shared-memory pools and its heap), less the
/// ~400 iobench's main process has faulted by then. See `start_up_footprint`.
const FIO_START_UP_PAGES: usize = 3900;

/// Touches, once per process and before the first job's buffers exist, as many fresh
/// pages as fio's start-up touches more than iobench's, and keeps them for the run.
///
/// Why: an O_DIRECT transfer from a buffer of scattered 4 KiB pages needs a segment per
/// page, and a queue with `max_segments` below the pages of one I/O (a virtio disk's 254
/// against a 1 MiB read's 256) splits it. Whether the pages are contiguous is decided by
/// the kernel's per-CPU free lists, which hand back the most recently freed pages first:
/// a process that just exited (the previous benchmark run, say) leaves its pages there,
/// in the reverse of the order it faulted them. fio's start-up takes ~17 MiB of those
/// pages before its buffers fault; iobench's took ~2 MiB, so its buffers got the previous
/// run's pages backwards, one segment each, and its 1 MiB reads went to the disk as two
/// requests where fio's went as one (issue 35; bench/contiguity.py measures it). Taking
/// the same pages first puts iobench's buffers where fio's go.
pub fn start_up_footprint() {
    static DONE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let len = FIO_START_UP_PAGES * PAGE;
        // SAFETY: a plain allocation, never freed: like fio's pools, it lives as long as
        // the process.
        let p = unsafe { libc::malloc(len) } as *mut u8;
        if p.is_null() {
            return 0;
        }
        for i in (0..len).step_by(PAGE) {
            // SAFETY: `i < len`, inside the allocation; a volatile write so the page is
            // faulted in now, not optimised away.
            unsafe { std::ptr::write_volatile(p.add(i), 1) };
        }
        p as usize
    });
}

/// How the region was obtained, to give it back the same way.
enum Source {
    /// calloc'd: large blocks come zeroed from fresh pages that are only faulted in when
    /// first touched, as fio's malloc'd buffers are (a read job's first reads fault them).
    Heap,
    Shm,
    Map {
        fd: Option<(i32, Option<PathBuf>)>,
    },
}

/// The I/O buffers of one job clone: `slots` buffers of `slot_len` bytes each, back to back,
/// the first starting `align` bytes past a page boundary. This is fio's layout (one region,
/// io_u i at `i * max_bs`), so an O_DIRECT transfer crosses the same page boundaries, and
/// so has the same segments, as fio's does.
pub struct IoMem {
    raw: *mut u8,
    total: usize,
    base: *mut u8,
    slot_len: usize,
    source: Source,
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("iomem: {what}: {e}"))
}

impl IoMem {
    /// Allocates the buffers (zeroed) as `opts` asks: the same kind of memory as fio's for
    /// each `iomem` (malloc'd memory gets whatever pages the kernel's default gives it, as
    /// fio's does; huge pages only when the job names `shmhuge` or `mmaphuge`).
    pub fn new(opts: &MemOpts, slots: usize, slot_len: usize) -> io::Result<IoMem> {
        let slot_len = slot_len.max(1);
        let mut total = slots
            .max(1)
            .checked_mul(slot_len)
            .and_then(|n| n.checked_add(PAGE + opts.align))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "iomem: too large"))?;
        let huge = matches!(opts.kind, MemKind::ShmHuge | MemKind::MmapHuge);
        if huge && opts.hugepage > 0 {
            total = total.next_multiple_of(opts.hugepage);
        }
        let (raw, source) = match opts.kind {
            MemKind::Malloc => {
                // SAFETY: a plain allocation of `total` (non-zero) bytes; freed in Drop.
                let p = unsafe { libc::calloc(1, total) } as *mut u8;
                if p.is_null() {
                    return Err(io::Error::from(io::ErrorKind::OutOfMemory));
                }
                (p, Source::Heap)
            }
            MemKind::Shm | MemKind::ShmHuge => {
                let mut flags = libc::IPC_CREAT | 0o600;
                if huge {
                    flags |= libc::SHM_HUGETLB;
                }
                // SAFETY: plain system calls on a private segment we create here.
                let id = unsafe { libc::shmget(libc::IPC_PRIVATE, total, flags) };
                if id < 0 {
                    return Err(os_err(if huge {
                        "shmget with huge pages (are huge pages reserved in \
                         /proc/sys/vm/nr_hugepages?)"
                    } else {
                        "shmget"
                    }));
                }
                // SAFETY: attaching the segment just created; checked for failure below.
                let p = unsafe { libc::shmat(id, std::ptr::null(), 0) };
                let failed = p as isize == -1;
                let err = failed.then(|| os_err("shmat"));
                // Marked for removal now: it goes away when detached, even if we crash.
                // SAFETY: IPC_RMID on our own segment; no buffer argument needed.
                unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
                if let Some(e) = err {
                    return Err(e);
                }
                (p as *mut u8, Source::Shm)
            }
            MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared => {
                let mut flags = 0;
                let mut fd = -1;
                let mut owned = None;
                if let Some(path) = &opts.file {
                    let existed = path.exists();
                    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                    // SAFETY: a NUL-terminated path; the fd is closed in Drop or below.
                    fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CREAT, 0o644) };
                    if fd < 0 {
                        return Err(os_err(&format!("open {}", path.display())));
                    }
                    owned = Some((fd, (!existed).then(|| path.clone())));
                    if opts.kind == MemKind::Mmap {
                        // SAFETY: truncating the file we just opened.
                        if unsafe { libc::ftruncate(fd, total as libc::off_t) } < 0 {
                            let e = os_err(&format!("truncate {}", path.display()));
                            close_and_unlink(owned);
                            return Err(e);
                        }
                        flags |= libc::MAP_PRIVATE;
                    } else {
                        flags |= libc::MAP_SHARED;
                    }
                } else {
                    flags |= libc::MAP_ANONYMOUS;
                    flags |= if opts.kind == MemKind::MmapShared {
                        libc::MAP_SHARED
                    } else {
                        libc::MAP_PRIVATE
                    };
                    if huge {
                        flags |= libc::MAP_HUGETLB;
                    }
                }
                // SAFETY: a fresh mapping of `total` bytes; unmapped in Drop.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        total,
                        libc::PROT_READ | libc::PROT_WRITE,
                        flags,
                        fd,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    let e = os_err(if huge {
                        "mmap with huge pages (are huge pages reserved in \
                         /proc/sys/vm/nr_hugepages?)"
                    } else {
                        "mmap"
                    });
                    close_and_unlink(owned);
                    return Err(e);
                }
                (p as *mut u8, Source::Map { fd: owned })
            }
        };
        // fio: the first buffer starts `iomem_align` bytes past the first page boundary.
        let skip = (raw as usize).next_multiple_of(PAGE) - raw as usize + opts.align;
        // SAFETY: `total` has room for a page of slack plus `align` before the slots.
        let base = unsafe { raw.add(skip) };
        let mem = IoMem {
            raw,
            total,
            base,
            slot_len,
            source,
        };
        if !matches!(mem.source, Source::Heap) {
            // Fresh shared/mapped memory reads as zeroes already, except a reused file.
            // SAFETY: the whole region is ours and nothing uses it yet.
            unsafe { std::ptr::write_bytes(mem.base, 0, slots.max(1) * slot_len) };
        }
        Ok(mem)
    }

    /// The first buffer.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Bytes from one buffer to the next (the job's largest block size, as fio's stride).
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// Buffer `i`.
    pub fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: callers pass i < slots, which keeps the offset inside the region.
        unsafe { self.base.add(i * self.slot_len) }
    }
}

fn close_and_unlink(owned: Option<(i32, Option<PathBuf>)>) {
    if let Some((fd, created)) = owned {
        // SAFETY: closing a descriptor we opened and nobody else holds.
        unsafe { libc::close(fd) };
        if let Some(p) = created {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for IoMem {
    fn drop(&mut self) {
        match &mut self.source {
            Source::Heap => {
                // SAFETY: calloc'd in `new`; no I/O is in flight any more.
                unsafe { libc::free(self.raw.cast()) };
            }
            Source::Shm => {
                // SAFETY: detaching the segment attached in `new`; no I/O is in flight.
                unsafe { libc::shmdt(self.raw as *const libc::c_void) };
            }
            Source::Map { fd } => {
                // SAFETY: unmapping the mapping made in `new`; no I/O is in flight.
                unsafe { libc::munmap(self.raw as *mut libc::c_void, self.total) };
                close_and_unlink(fd.take());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kind: MemKind, align: usize) -> MemOpts {
        MemOpts {
            kind,
            file: None,
            align,
            hugepage: 2 << 20,
        }
    }

    #[test]
    fn large_default_buffers_are_plain_heap_memory_as_fios_malloc() {
        // iodepth=8 of 1 MiB: calloc'd like fio's malloc, never advised for huge pages
        // (that made the block layer see fewer, larger requests than fio's).
        for align in [0usize, 512] {
            let m = IoMem::new(&opts(MemKind::Malloc, align), 8, 1 << 20).unwrap();
            assert!(matches!(m.source, Source::Heap));
            assert_eq!(m.base() as usize % PAGE, align, "{align}");
            assert_eq!(m.slot(1) as usize - m.slot(0) as usize, 1 << 20);
        }
    }

    #[test]
    fn every_plain_kind_gives_zeroed_writable_aligned_slots() {
        for kind in [
            MemKind::Malloc,
            MemKind::Shm,
            MemKind::Mmap,
            MemKind::MmapShared,
        ] {
            for align in [0usize, 512, 4096] {
                let m = IoMem::new(&opts(kind, align), 3, 5000).unwrap();
                // Back to back, as fio's io_u buffers (stride max_bs).
                assert_eq!(m.slot_len(), 5000);
                assert_eq!(m.base() as usize % PAGE, align % PAGE, "{kind:?} {align}");
                for i in 0..3 {
                    // SAFETY: slot i has slot_len bytes, ours.
                    let s = unsafe { std::slice::from_raw_parts_mut(m.slot(i), m.slot_len()) };
                    assert!(s.iter().all(|&b| b == 0));
                    s.fill(0xa5);
                }
            }
        }
    }

    #[test]
    fn a_mapped_file_is_created_and_removed() {
        let p = std::env::temp_dir().join(format!("iobench-iomem-{}", std::process::id()));
        let o = MemOpts {
            file: Some(p.clone()),
            ..opts(MemKind::Mmap, 0)
        };
        let m = IoMem::new(&o, 2, 4096).unwrap();
        assert!(p.exists());
        drop(m);
        assert!(!p.exists());
    }
}
