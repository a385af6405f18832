//! What the io_uring engine checks before its first I/O, and how it explains a kernel that
//! lacks something: each error names the engine, the option that needs the missing piece,
//! and what to change. Runs once per worker at setup, never per I/O.

use super::uring::UringOpts;
use std::io;

/// The CPUs the kernel lists as online (`/sys/devices/system/cpu/online`, e.g. "0-3,6").
fn online_cpus() -> Option<Vec<(u32, u32)>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    text.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (a, b) = p.split_once('-').unwrap_or((p, p));
            Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
        })
        .collect()
}

/// `sqthread_poll_cpu=N` must name an online CPU (the kernel refuses the ring otherwise,
/// with a bare EINVAL).
pub fn check_sqpoll_cpu(cpu: u32) -> io::Result<()> {
    match online_cpus() {
        Some(ranges) if !ranges.iter().any(|&(a, b)| (a..=b).contains(&cpu)) => {
            let list: Vec<String> = ranges
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect();
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "io_uring: sqthread_poll_cpu={cpu} is not an online CPU (online: {})",
                    list.join(",")
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The value of the `kernel.io_uring_disabled` sysctl, when the kernel has it.
fn disabled_sysctl() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string())
}

/// The setup flags the job's options ask for, as the options are named.
fn asked_flags(o: &UringOpts) -> String {
    let mut v = Vec::new();
    if o.hipri {
        v.push("hipri (IORING_SETUP_IOPOLL)");
    }
    if o.sqthread_poll {
        v.push("sqthread_poll (IORING_SETUP_SQPOLL)");
    }
    if o.sqthread_poll_cpu.is_some() {
        v.push("sqthread_poll_cpu (IORING_SETUP_SQ_AFF)");
    }
    if v.is_empty() {
        "no special flags".to_string()
    } else {
        v.join(", ")
    }
}

/// Explains why `io_uring_setup` failed with `e` for a job with options `o`.
pub fn setup_error(e: io::Error, o: &UringOpts) -> io::Error {
    let errno = e.raw_os_error().unwrap_or(0);
    let why = match errno {
        libc::ENOSYS => "this kernel has no io_uring support (io_uring_setup: ENOSYS); \
                         use another engine such as libaio or psync"
            .to_string(),
        libc::EPERM | libc::EACCES => {
            let mut s = String::from("io_uring is not permitted for this process");
            match disabled_sysctl().as_deref() {
                Some("2") => s.push_str(" (kernel.io_uring_disabled=2 turns it off for everyone)"),
                Some("1") => s.push_str(
                    " (kernel.io_uring_disabled=1 allows it only to CAP_SYS_ADMIN or the \
                     io_uring_group)",
                ),
                _ => s.push_str(" (a seccomp or container policy may forbid it)"),
            }
            if o.sqthread_poll {
                s.push_str("; sqthread_poll also needs CAP_SYS_ADMIN on kernels before 5.11");
            }
            s
        }
        libc::EINVAL => format!(
            "the kernel refused the ring's setup flags ({}): it may be too old for them",
            asked_flags(o)
        ),
        libc::ENOMEM => "not enough locked memory for the ring: raise the memlock limit \
                         (ulimit -l) or lower iodepth"
            .to_string(),
        libc::EMFILE | libc::ENFILE => {
            "no file descriptor left for the ring (raise ulimit -n)".to_string()
        }
        _ => format!("io_uring_setup failed with {}", asked_flags(o)),
    };
    io::Error::new(e.kind(), format!("io_uring: {why}: {e}"))
}

/// Explains why registering buffers (`fixedbufs`) or files (`registerfiles`) failed.
pub fn register_error(option: &str, e: io::Error) -> io::Error {
    let why = match e.raw_os_error().unwrap_or(0) {
        libc::ENOMEM => "not enough locked memory (raise ulimit -l, or lower iodepth or bs)",
        libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS => "this kernel does not support it",
        libc::EMFILE => "too many files for the ring (raise ulimit -n)",
        libc::EFAULT => "the kernel could not pin the buffers",
        _ => "the kernel refused it",
    };
    io::Error::new(e.kind(), format!("io_uring: {option}: {why}: {e}"))
}

/// The error for a job option whose opcode the kernel's probe says is missing.
pub fn missing_opcode(option: &str, opcodes: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("io_uring: {option} needs {opcodes}, which this kernel does not have"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_errors_name_what_is_missing() {
        let o = UringOpts {
            sqthread_poll: true,
            ..UringOpts::default()
        };
        let e = setup_error(io::Error::from_raw_os_error(libc::ENOSYS), &o).to_string();
        assert!(
            e.starts_with("io_uring: this kernel has no io_uring"),
            "{e}"
        );
        let e = setup_error(io::Error::from_raw_os_error(libc::EPERM), &o).to_string();
        assert!(
            e.contains("not permitted") && e.contains("sqthread_poll"),
            "{e}"
        );
        let e = setup_error(io::Error::from_raw_os_error(libc::EINVAL), &o).to_string();
        assert!(e.contains("sqthread_poll (IORING_SETUP_SQPOLL)"), "{e}");
    }

    #[test]
    fn an_offline_cpu_is_refused() {
        assert!(check_sqpoll_cpu(0).is_ok());
        let e = check_sqpoll_cpu(100_000).unwrap_err().to_string();
        assert!(e.contains("sqthread_poll_cpu=100000"), "{e}");
    }
}
