//! Anonymous memory mappings: zeroed, page-aligned regions, either shared with the worker
//! processes forked after they are made (the live board, flow counters, zone tables, the
//! `--debug` job filter, the `gtod_cpu` time word) or private (pinned `lockmem` memory,
//! large I/O buffers). One place for the `mmap` call and its failure check.

/// Whether forked processes see the caller's writes (and it theirs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// `MAP_SHARED`: one memory for the process and every child forked after the call.
    Shared,
    /// `MAP_PRIVATE`: the process's own (a child gets a copy on write).
    Private,
}

/// Maps `len` bytes (rounded up to pages by the kernel) of zeroed, page-aligned memory.
/// `noreserve` asks for address space only, with pages reserved as they are touched.
/// The caller unmaps it (`munmap` with the same `len`) or keeps it for the process's life.
pub(crate) fn anonymous(len: usize, sharing: Sharing, noreserve: bool) -> std::io::Result<*mut u8> {
    let mut flags = libc::MAP_ANONYMOUS;
    flags |= match sharing {
        Sharing::Shared => libc::MAP_SHARED,
        Sharing::Private => libc::MAP_PRIVATE,
    };
    if noreserve {
        flags |= libc::MAP_NORESERVE;
    }
    // SAFETY: an anonymous mapping asking for no particular address, so no existing
    // memory is touched; the result is checked before use.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p.cast())
}

/// Maps a zeroed, page-aligned page (4096 bytes), shared with every process forked from
/// now on; the caller keeps it mapped while any process may read it.
pub(crate) fn shared_page() -> std::io::Result<*mut u8> {
    anonymous(4096, Sharing::Shared, false)
}
