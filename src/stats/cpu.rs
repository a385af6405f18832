//! CPU accounting for the `cpu :` line: user/system time, context switches and page faults
//! from getrusage, taken at a job's start and end.

use serde::{Deserialize, Serialize};

/// CPU used over an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub usr_ms: u64,
    pub sys_ms: u64,
    /// Voluntary plus involuntary context switches.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

/// Whose usage to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The calling thread (a job run as a thread).
    Thread,
    /// The whole process (a job run as its own process).
    Process,
}

/// A getrusage reading.
#[derive(Debug, Clone, Copy)]
pub struct Rusage {
    usr_us: u64,
    sys_us: u64,
    ctx: u64,
    majf: u64,
    minf: u64,
}

fn tv_us(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64
}

impl Rusage {
    /// Reads the current usage; zeros if the kernel refuses (it does not for these).
    pub fn take(who: Who) -> Rusage {
        let w = match who {
            Who::Thread => libc::RUSAGE_THREAD,
            Who::Process => libc::RUSAGE_SELF,
        };
        // SAFETY: rusage is plain old data; getrusage fills it and we read it only on success.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage.
        let rc = unsafe { libc::getrusage(w, &mut ru) };
        if rc != 0 {
            return Rusage {
                usr_us: 0,
                sys_us: 0,
                ctx: 0,
                majf: 0,
                minf: 0,
            };
        }
        Rusage {
            usr_us: tv_us(ru.ru_utime),
            sys_us: tv_us(ru.ru_stime),
            ctx: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
            majf: ru.ru_majflt as u64,
            minf: ru.ru_minflt as u64,
        }
    }

    /// The usage between `start` and `self`, in fio's units (ms).
    pub fn since(&self, start: &Rusage) -> CpuUsage {
        CpuUsage {
            usr_ms: self.usr_us.saturating_sub(start.usr_us) / 1000,
            sys_ms: self.sys_us.saturating_sub(start.sys_us) / 1000,
            ctx: self.ctx.saturating_sub(start.ctx),
            majf: self.majf.saturating_sub(start.majf),
            minf: self.minf.saturating_sub(start.minf),
        }
    }
}
