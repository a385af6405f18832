//! A bare io_uring for `iobench peak -N1`'s untimed no-op requests: the run that shows the
//! kernel's own limit, so the tool's share of each request has to be as small as it can be.
//!
//! Measured on this project's VM (CPU time per request, `perf stat`, -d32 -s8 -c8), the
//! loop over the `io-uring` crate's queues cost 115-130 ns per no-op against t/io_uring's
//! 96-102 ns, and this ring 88-91 ns. The saving is in what the loop no longer does
//! between system calls: every submission slot holds a no-op from the start (the kernel
//! only reads them), so submitting a batch is one store of the queue's tail; reaping reads
//! each completion's result and moves the head once; the system call is made inline.
//! Timed no-ops (-t1) and reads keep the crate's ring in `uring.rs`.

use super::Counters;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

// The kernel's io_uring ABI (include/uapi/linux/io_uring.h): set-up flags, mmap offsets,
// enter flags and the register opcode used here.
const SETUP_CQSIZE: u32 = 1 << 3;
const SETUP_COOP_TASKRUN: u32 = 1 << 8;
const SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const SETUP_NO_SQARRAY: u32 = 1 << 16;
const FEAT_SINGLE_MMAP: u32 = 1;
const OFF_SQ_RING: i64 = 0;
const OFF_CQ_RING: i64 = 0x800_0000;
const OFF_SQES: i64 = 0x1000_0000;
const ENTER_GETEVENTS: u32 = 1;
const ENTER_REGISTERED_RING: u32 = 16;
const REGISTER_RING_FDS: u32 = 20;
const SQE_SIZE: usize = 64;
const CQE_SIZE: usize = 16;

/// The set-up flag sets tried in turn, cheapest first, down to what an older kernel
/// accepts (the same order as the engine's rings and t/io_uring's).
const FLAG_SETS: [u32; 5] = [
    SETUP_COOP_TASKRUN | SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN | SETUP_NO_SQARRAY,
    SETUP_COOP_TASKRUN | SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN,
    SETUP_COOP_TASKRUN | SETUP_SINGLE_ISSUER,
    SETUP_COOP_TASKRUN,
    0,
];

#[repr(C)]
#[derive(Default)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

#[repr(C)]
#[derive(Default)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

/// struct io_uring_params.
#[repr(C)]
#[derive(Default)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    cq_off: CqOffsets,
}

/// struct io_uring_rsrc_update, for registering the ring's own descriptor.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// One shared mapping of the ring's memory, unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: usize, offset: i64) -> io::Result<Self> {
        // SAFETY: a fresh shared mapping of the ring's descriptor at one of the offsets the
        // kernel defines for it; the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                offset,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The 32-bit ring word at byte offset `off` (an offset the kernel gave, inside).
    fn word(&self, off: u32) -> &AtomicU32 {
        &self.words(off, 1)[0]
    }

    /// `n` consecutive 32-bit ring words from byte offset `off`.
    fn words(&self, off: u32, n: usize) -> &[AtomicU32] {
        assert!(off as usize + 4 * n <= self.len && off % 4 == 0);
        // SAFETY: in bounds and aligned (checked); the kernel shares these words with us
        // and they are only accessed atomically; the mapping outlives the slice.
        unsafe { std::slice::from_raw_parts(self.ptr.add(off as usize).cast::<AtomicU32>(), n) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, not used after this.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// A ring whose every submission slot holds a no-op.
pub struct NopRing {
    /// Keeps the ring open (the mappings stay valid after it closes).
    _fd: OwnedFd,
    /// The descriptor (or registered index) and flags `io_uring_enter` is called with.
    enter_fd: i32,
    enter_flags: u32,
    rings: Mapping,
    /// The completion ring when the kernel maps it apart (no FEAT_SINGLE_MMAP).
    cq_map: Option<Mapping>,
    _sqes: Mapping,
    sq_tail: u32,
    cq_head: u32,
    cq_tail: u32,
    cqes: u32,
    cq_mask: u32,
    cq_entries: u32,
    /// The submission ring's size, for the set-up line.
    pub sq_entries: u32,
}

impl NopRing {
    /// Sets up a ring of `depth` entries (completion ring as deep), with the cheapest
    /// set-up flags the kernel takes, and registers its descriptor when `register_ring`.
    pub fn new(depth: u32, register_ring: bool) -> io::Result<Self> {
        let mut last = io::Error::from_raw_os_error(libc::EINVAL);
        for flags in FLAG_SETS {
            let mut p = Params {
                flags: flags | SETUP_CQSIZE,
                cq_entries: depth,
                ..Default::default()
            };
            // SAFETY: io_uring_setup reads and fills the params struct we own.
            let fd =
                unsafe { libc::syscall(libc::SYS_io_uring_setup, depth, &mut p as *mut Params) };
            if fd < 0 {
                last = io::Error::last_os_error();
                if last.raw_os_error() == Some(libc::EINVAL) {
                    continue;
                }
                return Err(last);
            }
            // SAFETY: the descriptor was just returned to us and is owned by nobody else.
            let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
            return Self::map(fd, &p, register_ring);
        }
        Err(last)
    }

    fn map(fd: OwnedFd, p: &Params, register_ring: bool) -> io::Result<Self> {
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * CQE_SIZE;
        let single = p.features & FEAT_SINGLE_MMAP != 0;
        let rings = Mapping::new(
            &fd,
            if single { sq_len.max(cq_len) } else { sq_len },
            OFF_SQ_RING,
        )?;
        let cq_map = if single {
            None
        } else {
            Some(Mapping::new(&fd, cq_len, OFF_CQ_RING)?)
        };
        // The slots come zeroed, and a zeroed entry is a no-op (IORING_OP_NOP is 0).
        let sqes = Mapping::new(&fd, p.sq_entries as usize * SQE_SIZE, OFF_SQES)?;
        if p.flags & SETUP_NO_SQARRAY == 0 {
            // Without NO_SQARRAY the kernel reads slot numbers from the array: slot i at i.
            for i in 0..p.sq_entries {
                rings
                    .word(p.sq_off.array + 4 * i)
                    .store(i, Ordering::Relaxed);
            }
        }
        let (mut enter_fd, mut enter_flags) = (fd.as_raw_fd(), 0);
        if register_ring {
            let mut up = RsrcUpdate {
                offset: u32::MAX,
                resv: 0,
                data: fd.as_raw_fd() as u64,
            };
            // SAFETY: registers one update entry that we own; the kernel writes its index.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    fd.as_raw_fd(),
                    REGISTER_RING_FDS,
                    &mut up as *mut RsrcUpdate,
                    1,
                )
            };
            // Older kernels lack it; t/io_uring carries on without it too.
            if r == 1 {
                (enter_fd, enter_flags) = (up.offset as i32, ENTER_REGISTERED_RING);
            }
        }
        let cq_mask_off = p.cq_off.ring_mask;
        let cq_mask = cq_map
            .as_ref()
            .unwrap_or(&rings)
            .word(cq_mask_off)
            .load(Ordering::Relaxed);
        Ok(NopRing {
            _fd: fd,
            enter_fd,
            enter_flags,
            rings,
            cq_map,
            _sqes: sqes,
            sq_tail: p.sq_off.tail,
            cq_head: p.cq_off.head,
            cq_tail: p.cq_off.tail,
            cqes: p.cq_off.cqes,
            cq_mask,
            cq_entries: p.cq_entries,
            sq_entries: p.sq_entries,
        })
    }

    /// The completion ring's size, for the set-up line.
    pub fn cq_entries(&self) -> u32 {
        self.cq_entries
    }

    fn cq(&self) -> &Mapping {
        self.cq_map.as_ref().unwrap_or(&self.rings)
    }

    /// Keeps `depth` no-ops in flight, `batch_submit` per call, until `stop`.
    pub fn run(
        &mut self,
        depth: u32,
        batch_submit: u32,
        batch_complete: u32,
        counters: &Counters,
        stop: &AtomicBool,
    ) -> io::Result<()> {
        let sq_tail = self.rings.word(self.sq_tail);
        let cq = self.cq();
        let (cq_head, cq_tail) = (cq.word(self.cq_head), cq.word(self.cq_tail));
        // The completion entries as 32-bit words (4 per entry; the result is the third).
        let cqe_words = cq.words(self.cqes, self.cq_entries as usize * CQE_SIZE / 4);
        let mask = self.cq_mask as usize;
        let mut tail = sq_tail.load(Ordering::Relaxed);
        let mut head = cq_head.load(Ordering::Relaxed);
        let (mut inflight, mut unsubmitted) = (0u32, 0u32);
        let (mut submitted, mut calls, mut reaped) = (0u64, 0u64, 0u64);
        while !stop.load(Ordering::Relaxed) {
            // Hand the kernel a batch: the slots already hold no-ops.
            let n = batch_submit.min(depth - inflight);
            tail = tail.wrapping_add(n);
            sq_tail.store(tail, Ordering::Release);
            unsubmitted += n;
            inflight += n;
            let to_wait = if n > 0 && inflight < depth {
                0
            } else {
                inflight.min(batch_complete)
            };
            let flags = self.enter_flags | if to_wait > 0 { ENTER_GETEVENTS } else { 0 };
            let ret = enter(self.enter_fd, unsubmitted, to_wait, flags);
            calls += 1;
            if ret >= 0 {
                unsubmitted -= ret as u32;
                submitted += ret as u64;
            } else if ![libc::EINTR, libc::EBUSY, libc::EAGAIN].contains(&(-ret as i32)) {
                return Err(io::Error::from_raw_os_error(-ret as i32));
            }
            // Reap: a no-op fails only when the kernel refuses it.
            let end = cq_tail.load(Ordering::Acquire);
            while head != end {
                // struct io_uring_cqe: user_data u64, res i32, flags u32.
                let res = cqe_words[(head as usize & mask) * 4 + 2].load(Ordering::Relaxed) as i32;
                if res < 0 {
                    let err = io::Error::from_raw_os_error(-res);
                    return Err(io::Error::new(err.kind(), format!("no-op failed: {err}")));
                }
                head = head.wrapping_add(1);
                inflight -= 1;
                reaped += 1;
            }
            cq_head.store(head, Ordering::Release);
            counters.publish(submitted, calls, reaped);
        }
        Ok(())
    }
}

/// io_uring_enter with no argument, made inline on x86-64 (a call through libc's
/// `syscall` costs a few ns per call, which t/io_uring does not pay either). Returns the
/// kernel's result: the entries submitted, or a negated errno.
#[inline]
fn enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32) -> i64 {
    #[cfg(target_arch = "x86_64")]
    {
        let ret: i64;
        // SAFETY: io_uring_enter(fd, to_submit, min_complete, flags, NULL, 0) reads no user
        // memory (the argument pointer is null); `syscall` clobbers rcx and r11 only, as
        // declared, and the kernel preserves every other register.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") libc::SYS_io_uring_enter => ret,
                in("rdi") i64::from(fd),
                in("rsi") u64::from(to_submit),
                in("rdx") u64::from(min_complete),
                in("r10") u64::from(flags),
                in("r8") 0u64,
                in("r9") 0u64,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: as above; libc's wrapper sets errno instead of returning it.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                min_complete,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            -i64::from(
                io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            )
        } else {
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Runs `depth` no-ops in batches on a fresh ring for 100 ms; (submitted, calls, reaped).
    fn spin(depth: u32, batch: u32, register_ring: bool) -> (u64, u64, u64) {
        let mut ring = NopRing::new(depth, register_ring).expect("io_uring set-up");
        assert!(ring.sq_entries >= depth && ring.cq_entries() >= depth);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let timer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            flag.store(true, Ordering::Relaxed);
        });
        let counters = Counters::default();
        ring.run(depth, batch, batch, &counters, &stop).unwrap();
        timer.join().unwrap();
        counters.read()
    }

    #[test]
    fn every_no_op_submitted_is_reaped_in_full_batches() {
        for register_ring in [true, false] {
            let (done, calls, reaped) = spin(32, 8, register_ring);
            assert!(calls > 100, "{calls} calls in 100 ms");
            // No-ops complete inside the submitting call: each call submits a whole batch
            // and nothing stays in flight.
            assert_eq!(done, calls * 8, "register_ring={register_ring}");
            assert_eq!(reaped, done);
        }
    }

    #[test]
    fn a_depth_that_is_no_power_of_two_and_a_batch_that_does_not_divide_it() {
        let (done, calls, reaped) = spin(6, 4, true);
        assert!(calls > 100);
        assert_eq!(reaped, done);
        assert!(done >= calls * 4 - 4, "{done} in {calls} calls");
    }
}
