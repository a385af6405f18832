//! One page of memory shared with the worker processes forked after it is mapped: where
//! the main process and its workers keep the few words they all read (the `--debug`
//! job filter, the `gtod_cpu` time word).

/// Maps a zeroed, page-aligned page (4096 bytes), shared with every process forked from
/// now on; the caller keeps it mapped while any process may read it.
pub(crate) fn shared_page() -> std::io::Result<*mut u8> {
    // SAFETY: an anonymous shared mapping of one page, asking for no particular address;
    // the result is checked before use.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p.cast())
}
