//! Pinning the calling thread to a set of CPUs: cpus_allowed, numa_cpu_nodes and the
//! verify_async_cpus checkers all end in the same `sched_setaffinity` call.

/// Pins the calling thread to `cpus` (numbers at or past CPU_SETSIZE are left out).
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        // SAFETY: c is below CPU_SETSIZE, inside the set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of that size.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
