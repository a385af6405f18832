//! `lockmem`: pins an amount of memory for as long as the job runs, so the job sees a
//! machine with that much less memory (a smaller page cache, as fio users simulate it).

/// Memory pinned with mlock(2); unpinned and unmapped when dropped.
pub struct Pinned {
    addr: *mut libc::c_void,
    len: usize,
}

/// Keeps at least this much of the machine's memory unpinned, as fio does.
const SPARE: u64 = 128 << 20;

/// Pins `bytes` of anonymous memory (none for 0). More than the machine's memory less
/// 128 MiB is cut down to that, with a warning.
pub fn pin(bytes: u64) -> Result<Option<Pinned>, String> {
    if bytes == 0 {
        return Ok(None);
    }
    let mut len = bytes;
    // SAFETY: sysconf only reads system configuration.
    let phys = unsafe {
        libc::sysconf(libc::_SC_PHYS_PAGES).max(0) as u64
            * libc::sysconf(libc::_SC_PAGESIZE).max(0) as u64
    };
    if phys > SPARE && len + SPARE > phys {
        len = phys - SPARE;
        eprintln!("iobench: limiting mlocked memory to {}MiB", len >> 20);
    }
    let len = len as usize;
    let addr = crate::shm::anonymous(len, crate::shm::Sharing::Private, false)
        .map_err(|e| format!("lockmem: cannot map {len} bytes: {e}"))?
        .cast::<libc::c_void>();
    let pinned = Pinned { addr, len };
    // SAFETY: [addr, addr + len) is the mapping made above.
    if unsafe { libc::mlock(addr, len) } != 0 {
        return Err(format!(
            "lockmem: cannot lock {len} bytes in memory: {} (see ulimit -l)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(Some(pinned))
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `pin` and is unmapped only here, once.
        unsafe {
            libc::munlock(self.addr, self.len);
            libc::munmap(self.addr, self.len);
        }
    }
}
