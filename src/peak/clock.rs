//! The clock for latency tracking: the CPU's time-stamp counter where there is one (a few
//! cycles per read, like t/io_uring), calibrated against CLOCK_MONOTONIC or given with -T.

use std::time::{Duration, Instant};

/// Ticks and their rate.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Ticks per second.
    pub rate: u64,
    tsc: bool,
}

impl Clock {
    /// A clock ticking at `rate` Hz when given, else calibrated over 50 ms.
    pub fn new(rate: Option<u64>) -> Self {
        if !cfg!(target_arch = "x86_64") {
            return Clock {
                rate: 1_000_000_000,
                tsc: false,
            };
        }
        if let Some(rate) = rate.filter(|r| *r > 0) {
            return Clock { rate, tsc: true };
        }
        let probe = Clock { rate: 1, tsc: true };
        let t0 = Instant::now();
        let c0 = probe.ticks();
        std::thread::sleep(Duration::from_millis(50));
        let c1 = probe.ticks();
        let ns = t0.elapsed().as_nanos().max(1) as u64;
        let rate = ((c1 - c0) as u128 * 1_000_000_000 / ns as u128) as u64;
        Clock {
            rate: rate.max(1),
            tsc: true,
        }
    }

    /// The current tick count.
    #[inline]
    pub fn ticks(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.tsc {
            // SAFETY: RDTSC has no preconditions on x86_64.
            return unsafe { core::arch::x86_64::_rdtsc() };
        }
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid timespec to write.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Converts a tick difference to nanoseconds.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        if self.rate == 1_000_000_000 {
            ticks
        } else {
            (ticks as u128 * 1_000_000_000 / self.rate as u128) as u64
        }
    }
}
