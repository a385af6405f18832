//! `iobench peak`: the peak-IOPS tool, with the options and output of fio's t/io_uring
//! (seed 002): a line a second with IOPS, bandwidth and I/Os per call, the maximum IOPS at
//! the end, and latency percentiles with -t1.

/// Prints a line of peak's output through [`out`]: a closed stdout (`peak … | head`)
/// stops the run quietly instead of panicking as `println!` would.
macro_rules! say {
    ($($t:tt)*) => { $crate::peak::out(format_args!("{}\n", format_args!($($t)*))) };
}

pub mod aio;
pub mod args;
pub mod clock;
mod nopring;
pub mod sync;
pub mod target;
pub mod uring;

use args::{Parsed, PeakArgs};
use clock::Clock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use target::Target;

/// A submitter's running totals, written by it and read by the reporting thread; each on its
/// own cache line so the submitter's writes do not slow the reader down.
#[repr(align(64))]
#[derive(Default)]
pub struct Counters {
    /// Requests submitted.
    done: AtomicU64,
    /// System calls made.
    calls: AtomicU64,
    /// Completions reaped.
    reaps: AtomicU64,
    /// True for the submitter that prints the set-up lines.
    print_setup: AtomicBool,
}

impl Counters {
    #[inline]
    pub fn publish(&self, done: u64, calls: u64, reaps: u64) {
        self.done.store(done, Ordering::Relaxed);
        self.calls.store(calls, Ordering::Relaxed);
        self.reaps.store(reaps, Ordering::Relaxed);
    }
    /// True once, for the submitter that prints the engine lines.
    pub fn first(&self) -> bool {
        self.print_setup.swap(false, Ordering::Relaxed)
    }
    fn read(&self) -> (u64, u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.calls.load(Ordering::Relaxed),
            self.reaps.load(Ordering::Relaxed),
        )
    }
}

/// A submitter's latencies, in fio's log-linear buckets.
pub type LatencyLog = crate::stats::hist::Hist;

/// Set by SIGINT/SIGTERM so every submitter stops and the totals still print.
static STOP: AtomicBool = AtomicBool::new(false);

/// Set when stdout could not be written (its reader went away): nothing more is printed.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout and flushes it. When that fails (EPIPE: the reader of a pipe
/// is gone), the submitters are stopped and nothing more is printed; the run ends
/// quietly with status 0, as a pipeline's `head` expects.
pub fn out(text: std::fmt::Arguments) {
    use std::io::Write;
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if o.write_fmt(text).and_then(|()| o.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
        STOP.store(true, Ordering::Relaxed);
    }
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Runs `iobench peak` with the arguments after `peak`; returns the exit status.
pub fn main(argv: &[String]) -> i32 {
    let a = match args::parse(argv) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            out(format_args!("{}", args::usage()));
            return 0;
        }
        Err(e) => {
            eprintln!("{e}");
            eprint!("{}", args::usage());
            return 1;
        }
    };
    match run(&a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("peak: {e}");
            1
        }
    }
}

fn install_signals() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Runs the submitters and prints a line a second, then the maximum and the percentiles.
pub fn run(a: &PeakArgs) -> std::io::Result<()> {
    let clock = Clock::new(a.tsc_rate);
    if a.track_latency && a.tsc_rate.is_none() && cfg!(target_arch = "x86_64") {
        say!("Using TSC rate {}Hz", clock.rate);
    }
    let targets: Vec<Arc<Target>> = if a.nop {
        Vec::new()
    } else {
        a.files
            .iter()
            .map(|f| Target::open(f, a.direct).map(Arc::new))
            .collect::<Result<_, _>>()?
    };
    if let Some(t) = targets.iter().find(|t| t.size < a.bs as u64) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{}: {} bytes is smaller than the block size (-b {}): no I/O fits",
                t.path, t.size, a.bs
            ),
        ));
    }
    STOP.store(false, Ordering::Relaxed);
    install_signals();
    // The runtime counts from before the threads start, so spawning many cannot stretch it.
    let start = Instant::now();
    let counters: Arc<Vec<Counters>> =
        Arc::new((0..a.threads).map(|_| Counters::default()).collect());
    counters[0].print_setup.store(true, Ordering::Relaxed);
    let mut handles = Vec::new();
    for t in 0..a.threads as usize {
        if STOP.load(Ordering::Relaxed)
            || (a.runtime > 0 && start.elapsed() >= Duration::from_secs(a.runtime as u64))
        {
            break;
        }
        let a = a.clone();
        let target = targets.get(t % targets.len().max(1)).cloned();
        let counters = counters.clone();
        let handle = std::thread::Builder::new().name(format!("peak-{t}")).spawn(
            move || -> std::io::Result<(u32, LatencyLog)> {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() } as u32;
                let file = target.as_ref().map(|t| t.path.as_str()).unwrap_or("nop");
                say!("submitter={t}, tid={tid}, file={file}, node=-1");
                let mut lat = LatencyLog::new();
                let seed = (tid as u64) << 32 | t as u64;
                let c = &counters[t];
                let result = if a.sync {
                    let target = target.as_deref().expect("files checked by args");
                    sync::run(&a, target, c, &STOP, &clock, &mut lat, seed)
                } else if a.aio {
                    let target = target.as_deref().expect("files checked by args");
                    aio::run(&a, target, c, &STOP, &clock, &mut lat, seed)
                } else {
                    uring::run(&a, target.as_deref(), c, &STOP, &clock, &mut lat, seed)
                };
                if result.is_err() {
                    STOP.store(true, Ordering::Relaxed);
                }
                result.map(|()| (tid, lat))
            },
        );
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Stop and collect the threads already running before reporting.
                STOP.store(true, Ordering::Relaxed);
                for h in handles {
                    let _ = h.join();
                }
                return Err(e);
            }
        }
    }

    let mut prev = (0u64, 0u64, 0u64);
    let mut max_iops = 0u64;
    let mut second = 0u32;
    let mut reason = "signal";
    while !STOP.load(Ordering::Relaxed) {
        second += 1;
        let due = start + Duration::from_secs(second as u64);
        while Instant::now() < due && !STOP.load(Ordering::Relaxed) {
            std::thread::sleep((due - Instant::now()).min(Duration::from_millis(20)));
        }
        if a.runtime > 0 && second >= a.runtime {
            reason = "timeout";
            STOP.store(true, Ordering::Relaxed);
        }
        if STOP.load(Ordering::Relaxed) {
            // As t/io_uring: the last second (cut by the timeout or a signal) is not printed.
            break;
        }
        let now = counters.iter().fold((0, 0, 0), |acc, c| {
            let (d, ca, r) = c.read();
            (acc.0 + d, acc.1 + ca, acc.2 + r)
        });
        let iops = now.0 - prev.0;
        let calls = now.1 - prev.1;
        let per_call = |n: u64| n.checked_div(calls).map_or(-1, |v| v as i64);
        max_iops = max_iops.max(iops);
        say!(
            "{}",
            second_line(iops, a.bs, a.nop, per_call(iops), per_call(now.2 - prev.2))
        );
        prev = now;
    }
    let mut failure = None;
    let mut latencies = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(v)) => latencies.push(v),
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(_) => failure = failure.or(Some(std::io::Error::other("a submitter panicked"))),
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    say!("Exiting on {reason}");
    say!("Maximum IOPS={}", scaled_iops(max_iops));
    if a.track_latency {
        for (tid, lat) in &latencies {
            say!("{tid}: Latency percentiles:");
            out(format_args!("{}", percentile_block(lat)));
        }
    }
    Ok(())
}

/// `1.23M`, `456.78K` or a plain count, as t/io_uring scales IOPS.
pub fn scaled_iops(iops: u64) -> String {
    if iops > 1_000_000 {
        format!("{:.2}M", iops as f64 / 1e6)
    } else if iops > 100_000 {
        format!("{:.2}K", iops as f64 / 1e3)
    } else {
        iops.to_string()
    }
}

/// One per-second line: `IOPS=…, BW=…, IOS/call=s/r`.
pub fn second_line(
    iops: u64,
    bs: u32,
    nop: bool,
    submit_per_call: i64,
    reap_per_call: i64,
) -> String {
    let mut line = format!("IOPS={}, ", scaled_iops(iops));
    if !nop {
        let bw_mib = if bs as u64 > 1 << 20 {
            iops * (bs as u64 >> 20)
        } else {
            iops / ((1u64 << 20) / bs.max(1) as u64)
        };
        if bw_mib > 2000 {
            line.push_str(&format!("BW={:.2}GiB/s, ", bw_mib as f64 / 1000.0));
        } else {
            line.push_str(&format!("BW={bw_mib}MiB/s, "));
        }
    }
    line.push_str(&format!("IOS/call={submit_per_call}/{reap_per_call}"));
    line
}

/// The percentile lines t/io_uring prints for -t1: four decimals, three a line, in nsec, or
/// in usec when every value is large.
pub fn percentile_block(lat: &LatencyLog) -> String {
    use crate::defs::percentiles::DEFAULT_PERCENTILES as LIST;
    let values = lat.percentiles(&LIST, lat.total());
    if values.is_empty() {
        return String::new();
    }
    let (minv, maxv) = values
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let (unit, divisor) = if minv > 2000 && maxv > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    let precision = 4;
    let width = 5.max(((maxv / divisor).max(1) as f64).log10() as usize + 1);
    let per_line = (80 - 7) / (precision + 10 + width);
    let mut out = format!("    percentiles ({unit}):\n     |");
    for (j, (p, v)) in LIST.iter().zip(&values).enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let v = if divisor > 1 { v.div_ceil(divisor) } else { *v };
        let last = j == values.len() - 1;
        out.push_str(&format!(
            " {p:>w$.precision$}th=[{v:>width$}]{}",
            if last { '\n' } else { ',' },
            w = precision + 3
        ));
        if !last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_scale_like_t_io_uring() {
        assert_eq!(scaled_iops(244_000), "244.00K");
        assert_eq!(scaled_iops(3_953_000), "3.95M");
        assert_eq!(scaled_iops(99_999), "99999");
        assert_eq!(
            second_line(1_000_000, 512, false, 8, 8),
            "IOPS=1000.00K, BW=488MiB/s, IOS/call=8/8"
        );
        assert_eq!(
            second_line(5_000_000, 512, true, 32, 32),
            "IOPS=5.00M, IOS/call=32/32"
        );
    }

    #[test]
    fn percentiles_print_in_t_io_uring_layout() {
        let mut h = LatencyLog::new();
        for _ in 0..1000 {
            h.add(4000);
        }
        let text = percentile_block(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    percentiles (nsec):");
        assert_eq!(lines.len(), 1 + 6, "{text}");
        // 4000 ns falls in the bucket whose representative value is 4016 ns.
        assert_eq!(
            lines[1],
            "     |  1.0000th=[ 4016],  5.0000th=[ 4016], 10.0000th=[ 4016],"
        );
        assert_eq!(lines[6], "     | 99.9500th=[ 4016], 99.9900th=[ 4016]");
        assert_eq!(lines[1].matches("th=[").count(), 3);
    }
}
