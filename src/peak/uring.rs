//! One io_uring submitter thread of `iobench peak`: keeps `depth` reads (or no-ops) in
//! flight on one ring, submitting and reaping in batches, and counts what it did in relaxed
//! atomics that the reporting thread reads once a second.

use super::args::PeakArgs;
use super::clock::Clock;
use super::nopring::NopRing;
use super::target::{OffsetPicker, Target};
use super::{Counters, LatencyLog};
use io_uring::{opcode, types};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

/// Page-aligned buffers, one per request slot, allocated once.
pub struct Buffers {
    ptr: *mut u8,
    layout: std::alloc::Layout,
    stride: usize,
    count: usize,
}

// SAFETY: the buffers are plain memory owned by one submitter thread at a time.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(count: usize, bs: usize) -> io::Result<Self> {
        let stride = bs.max(1).next_multiple_of(4096);
        let layout = std::alloc::Layout::from_size_align(stride * count.max(1), 4096)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size; freed in Drop with the same layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                "buffer allocation failed",
            ));
        }
        Ok(Buffers {
            ptr,
            layout,
            stride,
            count,
        })
    }

    /// The start of buffer `i`.
    pub fn at(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.count);
        // SAFETY: i < count, so the offset stays inside the allocation.
        unsafe { self.ptr.add(i * self.stride) }
    }

    pub fn iovecs(&self, len: usize) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| libc::iovec {
                iov_base: self.at(i).cast(),
                iov_len: len,
            })
            .collect()
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout and not used after this point.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Runs one submitter until `stop` is set or an I/O fails.
pub fn run(
    a: &PeakArgs,
    target: Option<&Target>,
    counters: &Counters,
    stop: &AtomicBool,
    clock: &Clock,
    lat: &mut LatencyLog,
    seed: u64,
) -> io::Result<()> {
    if a.nop && !a.track_latency {
        return run_nops(a, counters, stop);
    }
    let depth = a.depth as usize;
    // As t/io_uring: a completion ring as deep as the submission ring, and the set-up flags
    // that make the kernel's side cheaper (one issuer, deferred task work) where it has them.
    let (mut ring, _deferred) = crate::engine::uring::build_ring(a.depth, true, |b| {
        // No-ops never reach a device, so t/io_uring does not poll for them either.
        if a.polled && !a.nop {
            b.setup_iopoll();
        }
        b.setup_cqsize(a.depth);
        if a.restriction {
            b.setup_r_disabled();
        }
    })
    .map_err(|e| io::Error::new(e.kind(), format!("io_uring setup failed: {e}")))?;
    let bufs = Buffers::new(depth, a.bs as usize)?;
    if a.fixedbufs && !a.nop {
        let iov = bufs.iovecs(a.bs as usize);
        // SAFETY: the iovecs point into `bufs`, which outlives the ring (dropped after it).
        unsafe { ring.submitter().register_buffers(&iov) }
            .map_err(|e| io::Error::new(e.kind(), format!("registering buffers failed: {e}")))?;
    }
    let fd = target.map(|t| t.fd).unwrap_or(-1);
    if a.register_files && !a.nop {
        ring.submitter()
            .register_files(&[fd])
            .map_err(|e| io::Error::new(e.kind(), format!("registering files failed: {e}")))?;
    }
    if a.restriction {
        restrict(&ring)?;
    }
    // READV's vectors, one per slot, pointing into `bufs` (which outlives them).
    let iovecs = bufs.iovecs(a.bs as usize);
    if counters.first() {
        print_setup(a, ring.params().sq_entries(), ring.params().cq_entries());
    }
    // One submitter for the whole run: the crate remembers a registered ring descriptor in
    // the Submitter value, so a fresh one per call would enter by the plain descriptor.
    let (mut submitter, mut sq, mut cq) = ring.split();
    if a.register_ring {
        // Older kernels lack IORING_REGISTER_RING_FDS; t/io_uring carries on without it too.
        let _ = submitter.register_ring_fd();
    }

    let mut picker = target.map(|t| OffsetPicker::new(t.size, a.bs as u64, a.random, seed));
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut started: Vec<u64> = vec![0; depth];
    let mut inflight = 0usize;
    let (mut submitted, mut calls, mut reaped_total) = (0u64, 0u64, 0u64);
    let batch_submit = a.batch_submit as usize;
    let batch_complete = a.batch_complete as usize;
    let track = a.track_latency;

    while !stop.load(Ordering::Relaxed) {
        // Prepare one batch of new requests.
        let mut prepped = 0usize;
        {
            // Learn how far the kernel has consumed, so pushes see the room it freed.
            sq.sync();
            while prepped < batch_submit && inflight + prepped < depth {
                let Some(slot) = free.pop() else { break };
                let entry = if a.nop {
                    opcode::Nop::new().build()
                } else {
                    let off = picker.as_mut().map(|p| p.next_offset()).unwrap_or(0);
                    let buf = bufs.at(slot as usize);
                    match (a.fixedbufs, a.register_files) {
                        (true, true) => {
                            opcode::ReadFixed::new(types::Fixed(0), buf, a.bs, slot as u16)
                                .offset(off)
                                .build()
                        }
                        (true, false) => {
                            opcode::ReadFixed::new(types::Fd(fd), buf, a.bs, slot as u16)
                                .offset(off)
                                .build()
                        }
                        (false, true) if a.vectored => {
                            opcode::Readv::new(types::Fixed(0), &iovecs[slot as usize], 1)
                                .offset(off)
                                .build()
                        }
                        (false, false) if a.vectored => {
                            opcode::Readv::new(types::Fd(fd), &iovecs[slot as usize], 1)
                                .offset(off)
                                .build()
                        }
                        (false, true) => opcode::Read::new(types::Fixed(0), buf, a.bs)
                            .offset(off)
                            .build(),
                        (false, false) => opcode::Read::new(types::Fd(fd), buf, a.bs)
                            .offset(off)
                            .build(),
                    }
                }
                .user_data(slot as u64);
                if track {
                    started[slot as usize] = clock.ticks();
                }
                // SAFETY: the entry's buffer is slot `slot` of `bufs`, not reused until its
                // completion returns the slot to `free`; the fd stays open for the run.
                if unsafe { sq.push(&entry) }.is_err() {
                    free.push(slot);
                    break;
                }
                prepped += 1;
            }
            sq.sync();
        }
        inflight += prepped;
        let to_wait = if prepped > 0 && inflight < depth {
            0
        } else {
            inflight.min(batch_complete)
        };
        match submitter.submit_and_wait(to_wait) {
            Ok(n) => submitted += n as u64,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
            Err(e) => return Err(e),
        }
        calls += 1;
        // Reap whatever has completed.
        let now = if track { clock.ticks() } else { 0 };
        let mut reaped = 0usize;
        cq.sync();
        for cqe in &mut cq {
            let slot = cqe.user_data() as u32;
            if cqe.result() < 0 {
                let err = io::Error::from_raw_os_error(-cqe.result());
                if a.polled && cqe.result() == -libc::EOPNOTSUPP {
                    return Err(io::Error::new(
                        err.kind(),
                        "polled I/O (-p1) is not supported by this file, driver or kernel",
                    ));
                }
                return Err(io::Error::new(err.kind(), format!("I/O failed: {err}")));
            }
            if track {
                lat.add(clock.ticks_to_ns(now.saturating_sub(started[slot as usize])));
            }
            free.push(slot);
            reaped += 1;
        }
        cq.sync();
        inflight -= reaped;
        reaped_total += reaped as u64;
        counters.publish(submitted, calls, reaped_total);
    }
    Ok(())
}

/// Untimed no-ops on the bare ring (see `nopring`): the run that shows the kernel's limit.
fn run_nops(a: &PeakArgs, counters: &Counters, stop: &AtomicBool) -> io::Result<()> {
    let mut ring = NopRing::new(a.depth, a.register_ring)
        .map_err(|e| io::Error::new(e.kind(), format!("io_uring setup failed: {e}")))?;
    if counters.first() {
        print_setup(a, ring.sq_entries, ring.cq_entries());
    }
    ring.run(a.depth, a.batch_submit, a.batch_complete, counters, stop)
}

/// t/io_uring's two set-up lines for a ring.
fn print_setup(a: &PeakArgs, sq_entries: u32, cq_entries: u32) {
    a.print_options_line();
    say!("Engine=io_uring, sq_ring={sq_entries}, cq_ring={cq_entries}");
}

/// `-e`: limits the (disabled) ring to the opcodes and registrations a run uses, as
/// t/io_uring's restriction test does, then enables it.
fn restrict(ring: &io_uring::IoUring) -> io::Result<()> {
    use io_uring::register::Restriction;
    // The kernel's register opcodes (stable ABI): buffers, files, enable rings, ring fds.
    const REGISTER_BUFFERS: u8 = 0;
    const REGISTER_FILES: u8 = 2;
    const REGISTER_ENABLE_RINGS: u8 = 12;
    const REGISTER_RING_FDS: u8 = 20;
    let mut res = [
        Restriction::sqe_op(opcode::Nop::CODE),
        Restriction::sqe_op(opcode::Read::CODE),
        Restriction::sqe_op(opcode::Readv::CODE),
        Restriction::sqe_op(opcode::ReadFixed::CODE),
        Restriction::register_op(REGISTER_BUFFERS),
        Restriction::register_op(REGISTER_ENABLE_RINGS),
        Restriction::register_op(REGISTER_RING_FDS),
        Restriction::register_op(REGISTER_FILES),
    ];
    ring.submitter()
        .register_restrictions(&mut res)
        .map_err(|e| io::Error::new(e.kind(), format!("IORING_REGISTER_RESTRICTIONS: {e}")))?;
    ring.submitter()
        .register_enable_rings()
        .map_err(|e| io::Error::new(e.kind(), format!("enabling the ring failed: {e}")))
}
