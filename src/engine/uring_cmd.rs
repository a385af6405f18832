//! io_uring_cmd: NVMe commands passed through io_uring (`IORING_OP_URING_CMD` on a ring of
//! 128-byte submission and 32-byte completion entries) to an NVMe namespace's generic
//! character device (`/dev/ngXnY`), as fio's engine of that name with `cmd_type=nvme`
//! (the only kind there is). Each read is an NVMe Read, each write an NVMe Write, of the
//! namespace's LBAs; trims are Dataset Management (deallocate) commands from the fio 3.35
//! dialect on (fio 3.33 and 3.34 trim with BLKDISCARD, which a character device refuses),
//! syncs NVMe Flush from 3.38 on (before, fio refuses them: EOPNOTSUPP). The namespace's
//! id, LBA size and size come from NVME_IOCTL_ID and Identify Namespace, so `size=` is
//! optional. Options as fio's: `fixedbufs` (registered buffers), `registerfiles`,
//! `nonvectored` (fio's default, -1, is the plain command; 0 the vectored one),
//! `force_async`, `sqthread_poll`/`sqthread_poll_cpu`, `hipri` (a polled ring: the
//! namespace's controller needs poll queues).

use super::spec::{Flags, JobFacts, Spec};
use super::uring::{
    FIXEDBUFS, FORCE_ASYNC, NONVECTORED, REGISTERFILES, SQTHREAD_POLL, SQTHREAD_POLL_CPU,
};
use super::{Completion, Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::{Ddir, FioRelease};
use crate::engine::psync::{HIPRI, NOWAIT, UNCACHED};
use crate::error::JobError;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::RawFd;

/// `NVME_IOCTL_ID`: the namespace id of a namespace's device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4e40;
/// `NVME_IOCTL_ADMIN_CMD`: one admin command (struct nvme_passthru_cmd, 72 bytes).
const NVME_IOCTL_ADMIN_CMD: libc::c_ulong = 0xc048_4e41;
/// `NVME_URING_CMD_IO`: a command with one plain buffer.
const NVME_URING_CMD_IO: u32 = 0xc048_4e80;
/// `NVME_URING_CMD_IO_VEC`: a command whose buffer is an iovec array.
const NVME_URING_CMD_IO_VEC: u32 = 0xc048_4e81;

const NVME_CMD_FLUSH: u8 = 0x00;
const NVME_CMD_WRITE: u8 = 0x01;
const NVME_CMD_READ: u8 = 0x02;
const NVME_CMD_DSM: u8 = 0x09;
/// Dataset Management's "deallocate" attribute (cdw11).
const NVME_DSMGMT_AD: u32 = 1 << 2;

/// One NVMe namespace as the engine addresses it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Namespace {
    pub nsid: u32,
    pub lba_shift: u32,
    /// Namespace size in LBAs.
    pub nlba: u64,
}

/// NVME_IOCTL_ID and Identify Namespace (CNS 0) of the namespace open as `fd`.
pub fn identify(fd: RawFd) -> io::Result<Namespace> {
    // SAFETY: a plain C struct, for which all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat fills the struct it is given for an open descriptor.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFCHR {
        return Err(io::Error::other(
            "ioengine=io_uring_cmd only works with NVMe namespaces' generic character \
             devices (/dev/ngXnY)",
        ));
    }
    // SAFETY: NVME_IOCTL_ID takes no argument.
    let nsid = unsafe { libc::ioctl(fd, NVME_IOCTL_ID as _) };
    if nsid <= 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("not an NVMe namespace (NVME_IOCTL_ID: {e})"),
        ));
    }
    let mut data = vec![0u8; 4096];
    let mut cmd = [0u8; 72];
    cmd[0] = 0x06; // Identify
    cmd[4..8].copy_from_slice(&(nsid as u32).to_le_bytes());
    cmd[24..32].copy_from_slice(&(data.as_mut_ptr() as u64).to_le_bytes());
    cmd[36..40].copy_from_slice(&4096u32.to_le_bytes());
    // cdw10 = CNS 0 (the namespace), cdw11 = CSI 0 (NVM).
    cmd[64..68].copy_from_slice(&5000u32.to_le_bytes());
    // SAFETY: the command points at the live 4 KiB buffer it names.
    if unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD as _, cmd.as_mut_ptr()) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("Identify Namespace failed: {e}"),
        ));
    }
    let nsze = u64::from_le_bytes(data[0..8].try_into().unwrap_or([0; 8]));
    let flbas = (data[26] & 0x0f) as usize;
    let lbaf = &data[128 + 4 * flbas..];
    let ds = lbaf[2] as u32;
    if !(9..=16).contains(&ds) {
        return Err(io::Error::other(format!(
            "Identify Namespace gave an LBA size of 2^{ds} bytes"
        )));
    }
    Ok(Namespace {
        nsid: nsid as u32,
        lba_shift: ds,
        nlba: nsze,
    })
}

/// The size of the namespace at `path` (LBAs times LBA size), as fio's engine finds it.
pub fn device_size(path: &str) -> io::Result<u64> {
    let f = std::fs::File::open(crate::osstr::to_path(path))?;
    let ns = identify(std::os::fd::AsRawFd::as_raw_fd(&f))?;
    Ok(ns.nlba << ns.lba_shift)
}

/// io_uring_cmd's options.
#[derive(Debug, Clone, Copy)]
pub struct CmdOpts {
    fixedbufs: bool,
    registerfiles: bool,
    sqthread_poll: bool,
    sqthread_poll_cpu: Option<u32>,
    hipri: bool,
    /// The vectored command (`nonvectored=0`).
    vectored: bool,
    force_async: u32,
    /// Trims as Dataset Management commands (fio 3.35 on).
    dsm_trim: bool,
    /// Syncs as Flush commands (fio 3.38 on).
    flush: bool,
}

type Ring = IoUring<squeue::Entry128, cqueue::Entry32>;

/// The engine.
pub struct UringCmd {
    opts: CmdOpts,
    ring: Option<Ring>,
    ns: Vec<Namespace>,
    iovecs: Vec<libc::iovec>,
    /// Each slot's Dataset Management range (16 bytes: attributes, LBAs, start LBA).
    ranges: Vec<[u8; 16]>,
    events: Vec<Completion>,
    /// Each slot's length, to report a completed command's bytes.
    lens: Vec<usize>,
    staged: usize,
    in_kernel: usize,
    depth: usize,
    prepped: u32,
}

// SAFETY: the iovecs and ranges point into the worker's buffers and this engine's own
// vectors, used by one worker at a time.
unsafe impl Send for UringCmd {}

impl UringCmd {
    fn ring(&mut self) -> &mut Ring {
        self.ring
            .as_mut()
            .expect("io_uring_cmd engine used before setup")
    }

    fn namespace(&mut self, index: usize, fd: RawFd) -> io::Result<Namespace> {
        let ns = identify(fd)?;
        if index >= self.ns.len() {
            self.ns.resize(index + 1, Namespace::default());
        }
        self.ns[index] = ns;
        Ok(ns)
    }
}

impl Engine for UringCmd {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.depth = s.depth.max(1) as usize;
        for (i, f) in s.files.iter().enumerate() {
            self.namespace(i, f.fd)?;
        }
        if let (true, Some(cpu)) = (self.opts.sqthread_poll, self.opts.sqthread_poll_cpu) {
            super::uring_probe::check_sqpoll_cpu(cpu)?;
        }
        let o = self.opts;
        let entries = self.depth.next_power_of_two() as u32;
        let build = |fast: bool| {
            let mut b = IoUring::<squeue::Entry128, cqueue::Entry32>::builder();
            if o.hipri {
                b.setup_iopoll();
            }
            if o.sqthread_poll {
                b.setup_sqpoll(1000);
                if let Some(cpu) = o.sqthread_poll_cpu {
                    b.setup_sqpoll_cpu(cpu);
                }
            }
            if fast {
                b.setup_coop_taskrun();
            }
            b.setup_cqsize(2 * entries);
            b.build(entries)
        };
        let ring = match build(!o.sqthread_poll) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => build(false),
            r => r,
        }
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "io_uring_cmd: the kernel refused a ring of 128-byte entries{} ({e}); \
                     NVMe passthrough needs Linux 5.19 or newer",
                    if o.hipri { " with polling (hipri)" } else { "" }
                ),
            )
        })?;
        if o.fixedbufs {
            let bufs: Vec<libc::iovec> = (0..self.depth)
                .map(|i| libc::iovec {
                    // SAFETY: slot i's buffer lies inside the worker's region.
                    iov_base: unsafe { s.buf_base.add(i * s.slot_len) }.cast(),
                    iov_len: s.slot_len,
                })
                .collect();
            // SAFETY: the buffers live as long as the worker, which outlives the ring.
            unsafe { ring.submitter().register_buffers(&bufs) }
                .map_err(|e| super::uring_probe::register_error("fixedbufs", e))?;
        }
        if o.registerfiles {
            let fds: Vec<i32> = s.files.iter().map(|f| f.fd).collect();
            ring.submitter()
                .register_files(&fds)
                .map_err(|e| super::uring_probe::register_error("registerfiles", e))?;
        }
        self.iovecs = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0
            };
            self.depth
        ];
        self.ranges = vec![[0; 16]; self.depth];
        self.lens = vec![0; self.depth];
        self.events = vec![Completion { slot: 0, result: 0 }; 2 * self.depth];
        self.ring = Some(ring);
        Ok(())
    }

    fn file_opened(&mut self, index: usize, file: super::EngineFile) -> io::Result<()> {
        self.namespace(index, file.fd)?;
        if self.opts.registerfiles {
            if let Some(ring) = &self.ring {
                ring.submitter()
                    .register_files_update(index as u32, &[file.fd])
                    .map_err(|e| super::uring_probe::register_error("registerfiles", e))?;
            }
        }
        Ok(())
    }

    fn file_closing(&mut self, index: usize) {
        if self.opts.registerfiles {
            if let Some(ring) = &self.ring {
                let _ = ring.submitter().register_files_update(index as u32, &[-1]);
            }
        }
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if self.staged + self.in_kernel >= self.depth {
            return Ok(Queued::Busy);
        }
        let o = self.opts;
        let ns = match self.ns.get(io.file as usize) {
            Some(n) if n.nsid != 0 => *n,
            _ => self.namespace(io.file as usize, io.fd)?,
        };
        let slot = io.slot as usize;
        let mut cmd = [0u8; 80];
        let mut cmd_op = NVME_URING_CMD_IO;
        let mut buf_index = None;
        cmd[4..8].copy_from_slice(&ns.nsid.to_le_bytes());
        let slba = io.offset >> ns.lba_shift;
        let nlb = (io.len as u64 >> ns.lba_shift) as u32;
        match io.op {
            Op::Rw(d @ (Ddir::Read | Ddir::Write)) => {
                if io.len as u64 & ((1u64 << ns.lba_shift) - 1) != 0 || nlb == 0 {
                    io.result = -(libc::EINVAL as i64);
                    return Ok(Queued::Completed);
                }
                cmd[0] = if d == Ddir::Read {
                    NVME_CMD_READ
                } else {
                    NVME_CMD_WRITE
                };
                cmd[40..48].copy_from_slice(&slba.to_le_bytes());
                cmd[48..52].copy_from_slice(&(nlb - 1).to_le_bytes());
                if o.fixedbufs {
                    buf_index = Some(io.slot as u16);
                    cmd[24..32].copy_from_slice(&(io.buf as u64).to_le_bytes());
                    cmd[36..40].copy_from_slice(&(io.len as u32).to_le_bytes());
                } else if o.vectored {
                    cmd_op = NVME_URING_CMD_IO_VEC;
                    self.iovecs[slot] = libc::iovec {
                        iov_base: io.buf.cast(),
                        iov_len: io.len,
                    };
                    let iov = &self.iovecs[slot] as *const libc::iovec;
                    cmd[24..32].copy_from_slice(&(iov as u64).to_le_bytes());
                    cmd[36..40].copy_from_slice(&1u32.to_le_bytes());
                } else {
                    cmd[24..32].copy_from_slice(&(io.buf as u64).to_le_bytes());
                    cmd[36..40].copy_from_slice(&(io.len as u32).to_le_bytes());
                }
            }
            Op::Rw(_) if !o.dsm_trim => {
                // fio 3.33/3.34: a trim is the block layer's BLKDISCARD, which a
                // character device refuses (ENOTTY), as there.
                io.result = super::discard(io.fd, io.offset, io.len);
                return Ok(Queued::Completed);
            }
            Op::Rw(_) => {
                let r = &mut self.ranges[slot];
                *r = [0; 16];
                r[4..8].copy_from_slice(&nlb.to_le_bytes());
                r[8..16].copy_from_slice(&slba.to_le_bytes());
                cmd[0] = NVME_CMD_DSM;
                cmd[24..32].copy_from_slice(&(r.as_ptr() as u64).to_le_bytes());
                cmd[36..40].copy_from_slice(&16u32.to_le_bytes());
                // cdw10: ranges - 1 (one); cdw11: deallocate.
                cmd[44..48].copy_from_slice(&NVME_DSMGMT_AD.to_le_bytes());
            }
            Op::Sync { .. } if !o.flush => {
                io.result = -(libc::EOPNOTSUPP as i64);
                return Ok(Queued::Completed);
            }
            Op::Sync { .. } => cmd[0] = NVME_CMD_FLUSH,
        }
        self.lens[slot] = io.len;
        let mut b = if o.registerfiles {
            opcode::UringCmd80::new(types::Fixed(io.file), cmd_op)
        } else {
            opcode::UringCmd80::new(types::Fd(io.fd), cmd_op)
        }
        .cmd(cmd);
        if let Some(i) = buf_index {
            b = b.buf_index(Some(i));
        }
        let mut entry = b.build().user_data(io.slot as u64);
        if o.force_async > 0 {
            self.prepped += 1;
            if self.prepped == o.force_async {
                self.prepped = 0;
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        let sqpoll = o.sqthread_poll;
        // SAFETY: the buffer, iovec and range stay valid until the completion is reaped:
        // they belong to the pool slot, which the worker does not reuse before then.
        if !unsafe { super::uring::push_entry(self.ring(), &entry, sqpoll)? } {
            return Ok(Queued::Busy);
        }
        self.staged += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<usize> {
        if self.staged == 0 {
            return Ok(0);
        }
        let n = self.staged;
        loop {
            match self.ring().submit() {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) && self.in_kernel > 0 => {
                    return Ok(0)
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    std::thread::sleep(std::time::Duration::from_micros(1))
                }
                Err(e) => return Err(e),
            }
        }
        self.in_kernel += n;
        self.staged = 0;
        Ok(n)
    }

    fn getevents(&mut self, min: usize, max: usize) -> io::Result<usize> {
        let max = max.min(self.events.len()).max(1);
        let hipri = self.opts.hipri;
        let mut got = 0;
        loop {
            {
                let ring = self
                    .ring
                    .as_mut()
                    .expect("io_uring_cmd engine used before setup");
                let mut cq = ring.completion();
                cq.sync();
                for cqe in &mut cq {
                    let slot = cqe.user_data() as u32;
                    let res = cqe.result();
                    // 0 is success; a negative value an errno, a positive one the NVMe
                    // status of a command the device failed.
                    let result = match res {
                        0 => self.lens.get(slot as usize).copied().unwrap_or(0) as i64,
                        r if r < 0 => r as i64,
                        _ => -(libc::EIO as i64),
                    };
                    self.events[got] = Completion { slot, result };
                    got += 1;
                    if got == max {
                        break;
                    }
                }
            }
            let need = min.max(usize::from(hipri && got == 0 && self.in_kernel > 0));
            if got >= need {
                break;
            }
            match self.ring().submit_and_wait(need - got) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) && crate::stop::terminating() => {
                    break
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) => {}
                Err(e) => return Err(e),
            }
        }
        self.in_kernel -= got;
        Ok(got)
    }

    #[inline]
    fn event(&self, i: usize) -> Completion {
        self.events[i]
    }
}

impl super::spec::Declared for UringCmd {
    type Opts = CmdOpts;
    const SPECS: &'static [Spec] = &[Spec::new(
        "io_uring_cmd",
        "io_uring passthrough commands (NVMe)",
        Flags::ASYNC,
    )
    .options(&[
        HIPRI,
        super::cmdprio::CMDPRIO_PERCENTAGE,
        super::cmdprio::CMDPRIO_CLASS,
        super::cmdprio::CMDPRIO,
        super::cmdprio::CMDPRIO_BSSPLIT,
        super::cmdprio::CMDPRIO_HINT,
        FIXEDBUFS,
        REGISTERFILES,
        SQTHREAD_POLL,
        SQTHREAD_POLL_CPU,
        NONVECTORED,
        UNCACHED,
        NOWAIT,
        FORCE_ASYNC,
        super::refused::CMD_TYPE,
    ])
    .hidden()];
    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<CmdOpts, JobError> {
        if super::cmdprio::CmdprioOpts::resolve(r)?.is_some() {
            return Err(r.invalid_engine(
                "ioengine=io_uring_cmd: cmdprio options are not supported yet with NVMe \
                 passthrough (the priority would go in the command's own field)",
            ));
        }
        let release = r.raw.release;
        Ok(CmdOpts {
            fixedbufs: r.bool(&FIXEDBUFS)?,
            registerfiles: r.bool(&REGISTERFILES)?,
            sqthread_poll: r.bool(&SQTHREAD_POLL)?,
            sqthread_poll_cpu: r.int(&SQTHREAD_POLL_CPU)?.map(|v| v as u32),
            hipri: r.bool(&HIPRI)?,
            vectored: r.num(&NONVECTORED)? == 0,
            force_async: r.num(&FORCE_ASYNC)?.max(0) as u32,
            dsm_trim: release >= FioRelease::V3_35,
            flush: release >= FioRelease::V3_38,
        })
    }
    fn build(o: &CmdOpts) -> Self {
        UringCmd {
            opts: *o,
            ring: None,
            ns: Vec::new(),
            iovecs: Vec::new(),
            ranges: Vec::new(),
            events: Vec::new(),
            lens: Vec::new(),
            staged: 0,
            in_kernel: 0,
            depth: 0,
            prepped: 0,
        }
    }
    fn for_offload(o: &mut CmdOpts) {
        o.fixedbufs = false;
    }
    fn char_device_size(_: &CmdOpts, path: &str) -> Option<io::Result<u64>> {
        Some(device_size(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_numbers_are_the_kernels() {
        // _IOWR('N', 0x80, struct nvme_uring_cmd): 72 bytes, read-write.
        let iowr = |nr: u32| (3u32 << 30) | (72 << 16) | ((b'N' as u32) << 8) | nr;
        assert_eq!(NVME_URING_CMD_IO, iowr(0x80));
        assert_eq!(NVME_URING_CMD_IO_VEC, iowr(0x81));
        assert_eq!(NVME_IOCTL_ADMIN_CMD as u32, iowr(0x41));
    }

    #[test]
    fn a_block_device_or_file_is_refused() {
        let f = std::fs::File::open("/proc/self/status").unwrap();
        let e = identify(std::os::fd::AsRawFd::as_raw_fd(&f)).unwrap_err();
        assert!(e.to_string().contains("/dev/ngXnY"), "{e}");
    }
}
