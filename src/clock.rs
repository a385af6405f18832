//! The clock every latency and deadline is read from, chosen with `clocksource` as fio's:
//! `clock_gettime` (CLOCK_MONOTONIC through the vDSO, no system call), `gettimeofday`
//! (microsecond wall-clock time), or `cpu` (the CPU's time-stamp counter, calibrated
//! against CLOCK_MONOTONIC once, then read with a single instruction).
//!
//! Without `clocksource`, fio times with the TSC when the CPU says it is invariant, and so
//! does iobench ([`select_default`]): the same clock makes both tools' latencies comparable
//! and keeps the clock's own cost per I/O to a few nanoseconds.
//!
//! The choice is process-wide (fio's is global too); reading it costs one relaxed load.
//! Worker processes are forked after the choice, so they inherit it and its calibration.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

/// A `clocksource=` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockSource {
    Gettimeofday,
    #[default]
    ClockGettime,
    Cpu,
}

impl ClockSource {
    /// Reads a `clocksource=` value.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "gettimeofday" => Ok(ClockSource::Gettimeofday),
            "clock_gettime" => Ok(ClockSource::ClockGettime),
            "cpu" => Ok(ClockSource::Cpu),
            other => Err(format!(
                "'{other}' is not a clock source (expected gettimeofday, clock_gettime or cpu)"
            )),
        }
    }
}

const SRC_GTOD: u8 = 0;
const SRC_MONO: u8 = 1;
const SRC_CPU: u8 = 2;
/// `gtod_cpu`: the time a thread on another CPU keeps writing (see [`GtodOffload`]).
const SRC_OFFLOAD: u8 = 3;

static SOURCE: AtomicU8 = AtomicU8::new(SRC_MONO);
/// Set once a source was chosen: later choices in the same process are ignored, so threads
/// started later can never switch the clock under I/Os already being timed.
static CHOSEN: AtomicBool = AtomicBool::new(false);

/// The TSC's calibration: ns = base_ns + ((tsc - base_tsc) * mult) >> 32.
#[derive(Debug, Clone, Copy)]
struct Tsc {
    base_tsc: u64,
    base_ns: u64,
    mult: u64,
}

static TSC: OnceLock<Result<Tsc, String>> = OnceLock::new();

/// Makes `src` the clock of this process, unless one was chosen already (the first choice
/// stands, before any I/O is timed). For `cpu` the counter is calibrated first (about
/// 10 ms, once); the error says why it cannot be used.
pub fn select(src: ClockSource) -> Result<(), String> {
    if CHOSEN.load(Ordering::Relaxed) {
        return Ok(());
    }
    let code = match src {
        ClockSource::Gettimeofday => SRC_GTOD,
        ClockSource::ClockGettime => SRC_MONO,
        ClockSource::Cpu => {
            TSC.get_or_init(calibrate).clone()?;
            SRC_CPU
        }
    };
    SOURCE.store(code, Ordering::Relaxed);
    CHOSEN.store(true, Ordering::Relaxed);
    Ok(())
}

/// Chooses fio's default clock when no job set `clocksource`: the TSC when the CPU reports
/// it invariant (constant rate, synchronised across cores) and its calibration succeeds,
/// else CLOCK_MONOTONIC.
pub fn select_default() {
    if CHOSEN.load(Ordering::Relaxed) {
        return;
    }
    let src = if tsc_invariant() && TSC.get_or_init(calibrate).is_ok() {
        ClockSource::Cpu
    } else {
        ClockSource::ClockGettime
    };
    // Neither choice can fail now: the TSC was calibrated above.
    let _ = select(src);
}

/// The clock of this process, in use now.
pub fn selected() -> ClockSource {
    match SOURCE.load(Ordering::Relaxed) {
        SRC_GTOD | SRC_OFFLOAD => ClockSource::Gettimeofday,
        SRC_CPU => ClockSource::Cpu,
        _ => ClockSource::ClockGettime,
    }
}

/// Nanoseconds on the selected clock. Only differences between readings mean anything.
#[inline]
pub fn now_ns() -> u64 {
    match SOURCE.load(Ordering::Relaxed) {
        SRC_MONO => mono_ns(),
        SRC_CPU => cpu_ns(),
        SRC_OFFLOAD => offload_ns(),
        _ => gtod_ns(),
    }
}

/// CLOCK_MONOTONIC in ns (served by the vDSO: no system call).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[inline]
fn gtod_ns() -> u64 {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes into the timeval we own; no time zone is asked for.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000
}

#[inline]
fn cpu_ns() -> u64 {
    match TSC.get() {
        Some(Ok(t)) => {
            let d = read_tsc().wrapping_sub(t.base_tsc);
            t.base_ns + ((d as u128 * t.mult as u128) >> 32) as u64
        }
        _ => mono_ns(),
    }
}

/// Where the `gtod_cpu` thread publishes the time: one word in memory shared with the
/// worker processes forked after it was mapped (null when no offload runs).
static OFFLOAD_WORD: AtomicPtr<AtomicU64> = AtomicPtr::new(std::ptr::null_mut());

#[inline]
fn offload_ns() -> u64 {
    let word = OFFLOAD_WORD.load(Ordering::Relaxed);
    if word.is_null() {
        return gtod_ns();
    }
    // SAFETY: a non-null pointer is the shared page mapped by `GtodOffload::start`, which
    // is never unmapped (worker processes may still read it after the run).
    unsafe { (*word).load(Ordering::Relaxed) }
}

/// fio's `gtod_cpu`: a thread pinned to the given CPUs calls gettimeofday in a loop and
/// publishes the result, and every latency and deadline reads that value instead of a
/// clock, so the jobs' own CPUs never pay for a clock read. The time is then
/// microsecond-grained wall-clock time, as fio's offloaded time is. The thread spins
/// (it owns its CPU) until the guard is dropped.
pub struct GtodOffload {
    stop: std::sync::Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl GtodOffload {
    /// Starts the time thread on `cpus` and makes its time the clock of this process and
    /// of the workers forked from now on. The first reading is published before this
    /// returns, so no reader ever sees zero.
    pub fn start(cpus: &[usize]) -> Result<GtodOffload, String> {
        let word = match OFFLOAD_WORD.load(Ordering::Relaxed) {
            p if !p.is_null() => p,
            _ => {
                let p = crate::shm::shared_page()
                    .map_err(|e| format!("gtod_cpu: cannot map the shared time word: {e}"))?;
                let p = p.cast::<AtomicU64>();
                OFFLOAD_WORD.store(p, Ordering::Relaxed);
                p
            }
        };
        // SAFETY: `word` points into the page mapped above (page-aligned, zeroed, never
        // unmapped), which holds an AtomicU64.
        let shared: &'static AtomicU64 = unsafe { &*word };
        shared.store(gtod_ns(), Ordering::Relaxed);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let mut set: libc::cpu_set_t = {
            // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
            unsafe { std::mem::zeroed() }
        };
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: c is below CPU_SETSIZE.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gtod".into())
            .spawn(move || {
                // SAFETY: pid 0 is this thread; set is a valid cpu_set_t of that size.
                let pinned =
                    unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
                let _ = ready_tx.send(if pinned < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(())
                });
                if pinned < 0 {
                    return;
                }
                while !thread_stop.load(Ordering::Relaxed) {
                    shared.store(gtod_ns(), Ordering::Relaxed);
                    std::hint::spin_loop();
                }
            })
            .map_err(|e| format!("gtod_cpu: cannot start the time thread: {e}"))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(format!(
                    "gtod_cpu={cpus:?}: cannot pin the time thread: {e}"
                ));
            }
            Err(_) => return Err("gtod_cpu: the time thread ended at start".into()),
        }
        SOURCE.store(SRC_OFFLOAD, Ordering::Relaxed);
        CHOSEN.store(true, Ordering::Relaxed);
        Ok(GtodOffload {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for GtodOffload {
    /// Stops the thread; the clock goes back to reading gettimeofday directly (same
    /// time base), so anything timed across the stop stays consistent.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        SOURCE.store(SRC_GTOD, Ordering::Relaxed);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    0
}

/// True when the CPU says its TSC runs at a constant rate in every state (invariant TSC).
#[cfg(target_arch = "x86_64")]
fn tsc_invariant() -> bool {
    // Leaf 0x80000000 reports the highest extended leaf, checked before 0x80000007 is read.
    // `__cpuid` is an unsafe fn up to Rust 1.86 (the MSRV is 1.82) and safe since, hence
    // the allowance for newer compilers.
    // SAFETY: cpuid exists on every x86_64 CPU and only reads identification registers.
    #[allow(unused_unsafe)]
    let cpuid = |leaf: u32| unsafe { core::arch::x86_64::__cpuid(leaf) };
    let max = cpuid(0x8000_0000).eax;
    max >= 0x8000_0007 && cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[cfg(target_arch = "x86_64")]
fn calibrate() -> Result<Tsc, String> {
    if !tsc_invariant() {
        eprintln!("iobench: clocksource=cpu may not be reliable (this CPU's TSC is not invariant)");
    }
    // Count ticks over ~10 ms of CLOCK_MONOTONIC. Each end is the tightest of a few
    // (tsc, ns, tsc) readings, so a preemption between two reads cannot skew the rate.
    let pair = || {
        let mut best = (u64::MAX, 0u64, 0u64);
        for _ in 0..8 {
            let a = read_tsc();
            let ns = mono_ns();
            let b = read_tsc();
            let width = b.wrapping_sub(a);
            if width < best.0 {
                best = (width, a / 2 + b / 2, ns);
            }
        }
        (best.1, best.2)
    };
    let (t0, n0) = pair();
    let mut end = pair();
    while end.1 - n0 < 10_000_000 {
        std::hint::spin_loop();
        end = pair();
    }
    let (ticks, ns) = (end.0.wrapping_sub(t0), end.1 - n0);
    if ticks == 0 {
        return Err("clocksource=cpu: the CPU clock did not advance".into());
    }
    // ns per tick in 32.32 fixed point.
    let mult = ((ns as u128) << 32) / ticks as u128;
    Ok(Tsc {
        base_tsc: t0,
        base_ns: n0,
        mult: mult as u64,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_invariant() -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate() -> Result<Tsc, String> {
    Err("clocksource=cpu is not available on this architecture".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_knows_fio_words() {
        assert_eq!(ClockSource::parse("cpu"), Ok(ClockSource::Cpu));
        assert_eq!(
            ClockSource::parse("gettimeofday"),
            Ok(ClockSource::Gettimeofday)
        );
        assert!(ClockSource::parse("tsc").is_err());
    }

    #[test]
    fn the_default_is_the_tsc_exactly_when_it_is_invariant() {
        // No test in this binary selects a clock, so this is the first and only choice.
        select_default();
        assert_eq!(selected() == ClockSource::Cpu, tsc_invariant());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_cpu_clock_keeps_time_with_the_monotonic_clock() {
        let t = calibrate().unwrap();
        let _ = TSC.set(Ok(t));
        let (c0, m0) = (cpu_ns(), mono_ns());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (c1, m1) = (cpu_ns(), mono_ns());
        let (dc, dm) = ((c1 - c0) as f64, (m1 - m0) as f64);
        // A loaded machine disturbs the 10 ms calibration by a few percent; a wrong rate
        // (a unit slip, a bad counter) is off by far more than this bound.
        assert!(
            (dc / dm - 1.0).abs() < 0.10,
            "cpu {dc} ns vs monotonic {dm} ns"
        );
    }
}
