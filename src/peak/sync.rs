//! The synchronous peak submitter (-S1): one preadv2 per read, for comparing the cost of a
//! plain system call with io_uring's batched rings.

use super::args::PeakArgs;
use super::clock::Clock;
use super::target::{OffsetPicker, Target};
use super::uring::Buffers;
use super::{Counters, LatencyLog};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs preadv2 reads back to back until `stop` is set.
pub fn run(
    a: &PeakArgs,
    target: &Target,
    counters: &Counters,
    stop: &AtomicBool,
    clock: &Clock,
    lat: &mut LatencyLog,
    seed: u64,
) -> io::Result<()> {
    if counters.first() {
        a.print_options_line();
        say!("Engine=preadv2");
    }
    let bufs = Buffers::new(1, a.bs as usize)?;
    let iov = bufs.iovecs(a.bs as usize);
    let mut picker = OffsetPicker::new(target.size, a.bs as u64, a.random, seed);
    let flags = if a.polled { libc::RWF_HIPRI } else { 0 };
    let mut done = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let off = picker.next_offset();
        let t0 = if a.track_latency { clock.ticks() } else { 0 };
        // SAFETY: iov points at one buffer of a.bs bytes owned by `bufs` for this call.
        let r = unsafe { libc::preadv2(target.fd, iov.as_ptr(), 1, off as libc::off_t, flags) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(io::Error::new(e.kind(), format!("preadv2 failed: {e}")));
        }
        if a.track_latency {
            lat.add(clock.ticks_to_ns(clock.ticks().saturating_sub(t0)));
        }
        done += 1;
        counters.publish(done, done, done);
    }
    Ok(())
}
