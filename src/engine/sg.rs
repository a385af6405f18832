//! sg: SCSI commands through the Linux SCSI generic interface (sg v3's `struct sg_io_hdr`),
//! on a SCSI generic character device (`/dev/sgN`) or a SCSI block device (`/dev/sdX`).
//! Reads are READ(10)/READ(16), writes WRITE(10)/(16) or the command `sg_write_mode`
//! names (WRITE AND VERIFY, WRITE SAME, VERIFY, WRITE STREAM), trims UNMAP, syncs
//! SYNCHRONIZE CACHE; `readfua`/`writefua` set the commands' FUA bit and `hipri` asks for a
//! polled completion. The block size comes from READ CAPACITY (a character device) or
//! BLKSSZGET (a block device); a character device is sized by READ CAPACITY, as fio's
//! engine does. fio's engine is synchronous (its queue depth is capped at 1), and so is
//! this one: every command is one `SG_IO` ioctl, which both kinds of device take. fio
//! sends the same commands through `write`/`read` of the header on a character device
//! opened for buffered I/O; the device sees the same commands either way.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, Queued};
use crate::defs::reader::Reader;
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::engine::psync::HIPRI;
use crate::error::JobError;
use std::io;
use std::os::fd::RawFd;

/// The kernel's `struct sg_io_hdr` (scsi/sg.h), x86-64 and aarch64 layout.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct SgIoHdr {
    interface_id: i32,
    dxfer_direction: i32,
    cmd_len: u8,
    mx_sb_len: u8,
    iovec_count: u16,
    dxfer_len: u32,
    dxferp: *mut libc::c_void,
    cmdp: *const u8,
    sbp: *mut u8,
    timeout: u32,
    flags: u32,
    pack_id: i32,
    usr_ptr: *mut libc::c_void,
    status: u8,
    masked_status: u8,
    msg_status: u8,
    sb_len_wr: u8,
    host_status: u16,
    driver_status: u16,
    resid: i32,
    duration: u32,
    info: u32,
}

/// `SG_IO`: send one command and wait for it.
const SG_IO: libc::c_ulong = 0x2285;
/// `SG_GET_VERSION_NUM`: answered only by a SCSI generic device.
const SG_GET_VERSION_NUM: libc::c_ulong = 0x2282;
/// `BLKSSZGET`: a block device's logical block size.
const BLKSSZGET: libc::c_ulong = 0x1268;
const SG_DXFER_NONE: i32 = -1;
const SG_DXFER_TO_DEV: i32 = -2;
const SG_DXFER_FROM_DEV: i32 = -3;
/// The command ended with sense data or a non-good status.
const SG_INFO_CHECK: u32 = 0x1;
/// sg v4's polled-completion flag, which fio sets for `hipri`.
const SGV4_FLAG_HIPRI: u32 = 0x800;
/// Every command's timeout (fio's too: 30 s).
const TIMEOUT_MS: u32 = 30_000;
/// The largest LBA a 10-byte command can address.
const MAX_10B_LBA: u64 = 0xffff_ffff;

/// Which command a write is (`sg_write_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    Write,
    WriteVerify,
    WriteSame,
    WriteSameNdob,
    WriteStream,
    VerifyBytchk00,
    VerifyBytchk01,
    VerifyBytchk11,
}

const SG_WRITE_MODE_CHOICES: &[(&str, &str)] = &[
    ("write", "WRITE"),
    ("write_and_verify", "WRITE AND VERIFY"),
    ("verify", "same as write_and_verify"),
    ("write_same", "WRITE SAME"),
    ("same", "same as write_same"),
    ("write_same_ndob", "WRITE SAME with no data buffer"),
    ("verify_bytchk_00", "VERIFY without data"),
    ("verify_bytchk_01", "VERIFY comparing data"),
    ("verify_bytchk_11", "VERIFY with one block of data"),
    ("write_stream", "WRITE STREAM"),
];

pub const READFUA: OptDef = opt("readfua", K::Bool, "Send reads with Force Unit Access")
    .def("0")
    .cat(C::Engine)
    .engines(&["sg"]);

pub const WRITEFUA: OptDef = opt("writefua", K::Bool, "Send writes with Force Unit Access")
    .def("0")
    .cat(C::Engine)
    .engines(&["sg"]);

pub const SG_WRITE_MODE: OptDef = opt(
    "sg_write_mode",
    K::Choice(SG_WRITE_MODE_CHOICES),
    "Which SCSI command writes use",
)
.def("write")
.cat(C::Engine)
.engines(&["sg"]);

pub const STREAM_ID: OptDef = opt(
    "stream_id",
    K::Int {
        min: i64::MIN,
        max: i64::MAX,
    },
    "Stream id for SCSI WRITE STREAM commands",
)
.def("0")
.cat(C::Engine)
.engines(&["sg"]);

/// The sg engine's options, read once.
#[derive(Debug, Clone, Copy)]
pub struct SgOpts {
    hipri: bool,
    readfua: bool,
    writefua: bool,
    mode: WriteMode,
    /// WRITE STREAM's stream id; 0: open one per file (and close it at the end).
    stream_id: u16,
}

/// Per file: its logical block size, whether 16-byte commands are needed, its stream.
#[derive(Debug, Clone, Copy, Default)]
struct FileInfo {
    fd: RawFd,
    bs: u32,
    /// The stream this engine opened (closed when the file closes), 0 for none.
    opened_stream: u16,
    stream: u16,
}

/// The engine: one `SG_IO` per I/O.
#[derive(Debug)]
pub struct Sg {
    opts: SgOpts,
    files: Vec<FileInfo>,
    /// UNMAP's parameter list (one range), kept so no I/O allocates.
    unmap: [u8; 24],
}

/// A command's descriptor block and the sense data it may return.
struct Cdb {
    bytes: [u8; 16],
    len: u8,
}

impl Cdb {
    fn new(len: u8) -> Self {
        Cdb {
            bytes: [0; 16],
            len,
        }
    }
}

/// Sends `cdb` on `fd` with `len` bytes at `buf` in `dir`; the bytes the command moved, or
/// a negative errno (EIO for a command that ended with a check condition).
///
/// # Safety
/// `buf` must be valid for `len` bytes (writable for `SG_DXFER_FROM_DEV`).
unsafe fn send(fd: RawFd, cdb: &Cdb, dir: i32, buf: *mut u8, len: u32, flags: u32) -> i64 {
    let mut sense = [0u8; 64];
    let mut hdr = SgIoHdr {
        interface_id: b'S' as i32,
        dxfer_direction: dir,
        cmd_len: cdb.len,
        mx_sb_len: sense.len() as u8,
        iovec_count: 0,
        dxfer_len: len,
        dxferp: buf.cast(),
        cmdp: cdb.bytes.as_ptr(),
        sbp: sense.as_mut_ptr(),
        timeout: TIMEOUT_MS,
        flags,
        pack_id: 0,
        usr_ptr: std::ptr::null_mut(),
        status: 0,
        masked_status: 0,
        msg_status: 0,
        sb_len_wr: 0,
        host_status: 0,
        driver_status: 0,
        resid: 0,
        duration: 0,
        info: 0,
    };
    // SAFETY: the header points at the live CDB, sense buffer and the caller's buffer.
    let r = unsafe { libc::ioctl(fd, SG_IO as _, &mut hdr as *mut SgIoHdr) };
    if r < 0 {
        return super::neg_errno(-1);
    }
    if hdr.info & SG_INFO_CHECK != 0 || hdr.status != 0 {
        return -(libc::EIO as i64);
    }
    len as i64
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// READ CAPACITY of the device open as `fd`: its logical block size and last LBA,
/// READ CAPACITY(10) first and (16) when the device is too large for it or refuses (10).
pub fn read_capacity(fd: RawFd) -> io::Result<(u32, u64)> {
    let mut buf = [0u8; 32];
    let mut cdb = Cdb::new(10);
    cdb.bytes[0] = 0x25;
    // SAFETY: `buf` is a live local of the length given.
    let r = unsafe { send(fd, &cdb, SG_DXFER_FROM_DEV, buf.as_mut_ptr(), 32, 0) };
    if r < 0 && r != -(libc::EIO as i64) {
        return Err(io::Error::from_raw_os_error(-r as i32));
    }
    let (mut bs, mut last) = (be32(&buf[4..]), be32(&buf[..4]) as u64);
    if r < 0 || last == MAX_10B_LBA {
        let mut cdb = Cdb::new(16);
        cdb.bytes[0] = 0x9e; // SERVICE ACTION IN(16)
        cdb.bytes[1] = 0x10; // READ CAPACITY(16)
        cdb.bytes[10..14].copy_from_slice(&32u32.to_be_bytes());
        buf = [0; 32];
        // SAFETY: as above.
        let r = unsafe { send(fd, &cdb, SG_DXFER_FROM_DEV, buf.as_mut_ptr(), 32, 0) };
        if r < 0 {
            return Err(io::Error::from_raw_os_error(-r as i32));
        }
        bs = be32(&buf[8..]);
        last = u64::from_be_bytes(buf[..8].try_into().unwrap_or([0; 8]));
    }
    if bs == 0 || !bs.is_power_of_two() {
        return Err(io::Error::other(format!(
            "READ CAPACITY gave a block size of {bs} bytes"
        )));
    }
    Ok((bs, last))
}

fn is_block(fd: RawFd) -> io::Result<bool> {
    // SAFETY: a plain C struct, for which all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat fills the struct it is given for an open descriptor.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFBLK => Ok(true),
        libc::S_IFCHR => Ok(false),
        _ => Err(io::Error::other(
            "ioengine=sg only works on block devices (/dev/sdX) and SCSI generic \
             character devices (/dev/sgN)",
        )),
    }
}

/// The size of a SCSI generic character device, by READ CAPACITY (fio's engine sizes it
/// so, where other engines need `size=`).
pub fn device_size(path: &str) -> io::Result<u64> {
    let f = std::fs::File::open(crate::osstr::to_path(path))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    check_sg(fd)?;
    let (bs, last) = read_capacity(fd)
        .map_err(|e| io::Error::new(e.kind(), format!("{path}: READ CAPACITY failed: {e}")))?;
    Ok((last + 1) * bs as u64)
}

/// A character device must be a SCSI generic one.
fn check_sg(fd: RawFd) -> io::Result<()> {
    let mut version: i32 = 0;
    // SAFETY: SG_GET_VERSION_NUM writes one int.
    if unsafe { libc::ioctl(fd, SG_GET_VERSION_NUM as _, &mut version as *mut i32) } < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("not a SCSI generic device (SG_GET_VERSION_NUM: {e})"),
        ));
    }
    Ok(())
}

impl Sg {
    fn file_info(&self, fd: RawFd) -> io::Result<FileInfo> {
        let bs = if is_block(fd)? {
            let mut bs: libc::c_int = 0;
            // SAFETY: BLKSSZGET writes one int.
            if unsafe { libc::ioctl(fd, BLKSSZGET as _, &mut bs as *mut libc::c_int) } < 0 {
                return Err(io::Error::last_os_error());
            }
            bs as u32
        } else {
            check_sg(fd)?;
            read_capacity(fd)?.0
        };
        let mut info = FileInfo {
            fd,
            bs,
            opened_stream: 0,
            stream: self.opts.stream_id,
        };
        if self.opts.mode == WriteMode::WriteStream && info.stream == 0 {
            info.stream = stream_control(fd, None)?;
            info.opened_stream = info.stream;
        }
        Ok(info)
    }

    fn close_info(&mut self, index: usize) {
        if let Some(f) = self.files.get_mut(index) {
            if f.opened_stream != 0 {
                let _ = stream_control(f.fd, Some(f.opened_stream));
                f.opened_stream = 0;
            }
        }
    }
}

/// GET STREAM STATUS-style stream management (SERVICE ACTION IN(16)): opens a stream
/// (`None`; returns its id) or closes `Some(id)`.
fn stream_control(fd: RawFd, close: Option<u16>) -> io::Result<u16> {
    let mut buf = [0u8; 8];
    let mut cdb = Cdb::new(16);
    cdb.bytes[0] = 0x9e;
    cdb.bytes[10..14].copy_from_slice(&8u32.to_be_bytes());
    match close {
        None => cdb.bytes[1] = 0x34, // STREAM CONTROL: open
        Some(id) => {
            cdb.bytes[1] = 0x54; // STREAM CONTROL: close
            cdb.bytes[4..6].copy_from_slice(&id.to_be_bytes());
        }
    }
    // SAFETY: `buf` is a live local of the length given.
    let r = unsafe { send(fd, &cdb, SG_DXFER_FROM_DEV, buf.as_mut_ptr(), 8, 0) };
    if r < 0 {
        return Err(io::Error::other(format!(
            "sg_write_mode=write_stream: STREAM CONTROL failed ({})",
            io::Error::from_raw_os_error(-r as i32)
        )));
    }
    let id = u16::from_be_bytes([buf[4], buf[5]]);
    if close.is_none() && id == 0 {
        return Err(io::Error::other(
            "sg_write_mode=write_stream: the device opened no stream",
        ));
    }
    Ok(id)
}

/// Puts `lba` and `blocks` into a READ/WRITE/VERIFY CDB of its length.
fn set_lba(cdb: &mut Cdb, lba: u64, blocks: u32) {
    if cdb.len == 10 {
        cdb.bytes[2..6].copy_from_slice(&(lba as u32).to_be_bytes());
        cdb.bytes[7..9].copy_from_slice(&(blocks as u16).to_be_bytes());
    } else {
        cdb.bytes[2..10].copy_from_slice(&lba.to_be_bytes());
        cdb.bytes[10..14].copy_from_slice(&blocks.to_be_bytes());
    }
}

impl Drop for Sg {
    fn drop(&mut self) {
        for i in 0..self.files.len() {
            self.close_info(i);
        }
    }
}

impl Engine for Sg {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.files = Vec::with_capacity(s.files.len());
        for f in s.files {
            let info = self.file_info(f.fd)?;
            self.files.push(info);
        }
        Ok(())
    }

    fn file_opened(&mut self, index: usize, file: super::EngineFile) -> io::Result<()> {
        let info = self.file_info(file.fd)?;
        if index >= self.files.len() {
            self.files.resize(index + 1, FileInfo::default());
        }
        self.files[index] = info;
        Ok(())
    }

    fn file_closing(&mut self, index: usize) {
        self.close_info(index);
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        let info = match self.files.get(io.file as usize) {
            Some(f) if f.fd == io.fd && f.bs > 0 => *f,
            _ => self.file_info(io.fd)?,
        };
        let bs = info.bs as u64;
        let o = self.opts;
        if let Op::Sync { .. } = io.op {
            let cdb = {
                let mut c = Cdb::new(10);
                c.bytes[0] = 0x35; // SYNCHRONIZE CACHE(10): the whole medium
                c
            };
            // SAFETY: no data is moved.
            let r = unsafe { send(io.fd, &cdb, SG_DXFER_NONE, std::ptr::null_mut(), 0, 0) };
            io.result = r.min(0);
            return Ok(Queued::Completed);
        }
        if io.len as u64 % bs != 0 {
            // fio: "read/write not sector aligned"
            io.result = -(libc::EINVAL as i64);
            return Ok(Queued::Completed);
        }
        let lba = io.offset / bs;
        let blocks = (io.len as u64 / bs) as u32;
        let short = lba < MAX_10B_LBA && blocks <= 0xffff;
        let mut cdb = Cdb::new(if short { 10 } else { 16 });
        let mut dir = SG_DXFER_TO_DEV;
        let mut xfer = io.len as u32;
        let mut flags = 0;
        let mut with_lba = true;
        match io.op {
            Op::Rw(Ddir::Read) => {
                dir = SG_DXFER_FROM_DEV;
                cdb.bytes[0] = if short { 0x28 } else { 0x88 };
                if o.readfua {
                    cdb.bytes[1] |= 0x08;
                }
                if o.hipri {
                    flags |= SGV4_FLAG_HIPRI;
                }
            }
            Op::Rw(Ddir::Write) => match o.mode {
                WriteMode::Write => {
                    cdb.bytes[0] = if short { 0x2a } else { 0x8a };
                    if o.writefua {
                        cdb.bytes[1] |= 0x08;
                    }
                    if o.hipri {
                        flags |= SGV4_FLAG_HIPRI;
                    }
                }
                WriteMode::WriteVerify => cdb.bytes[0] = if short { 0x2e } else { 0x8e },
                WriteMode::WriteSame => {
                    cdb.bytes[0] = if short { 0x41 } else { 0x93 };
                    xfer = info.bs;
                }
                WriteMode::WriteSameNdob => {
                    cdb = Cdb::new(16);
                    cdb.bytes[0] = 0x93;
                    cdb.bytes[1] = 0x01; // NDOB: no data-out buffer
                    dir = SG_DXFER_NONE;
                    xfer = 0;
                }
                WriteMode::WriteStream => {
                    cdb = Cdb::new(16);
                    cdb.bytes[0] = 0x9a;
                    if o.writefua {
                        cdb.bytes[1] |= 0x08;
                    }
                    cdb.bytes[2..10].copy_from_slice(&lba.to_be_bytes());
                    cdb.bytes[10..12].copy_from_slice(&info.stream.to_be_bytes());
                    cdb.bytes[12..14].copy_from_slice(&(blocks as u16).to_be_bytes());
                    with_lba = false;
                }
                WriteMode::VerifyBytchk00 => {
                    cdb.bytes[0] = if short { 0x2f } else { 0x8f };
                    dir = SG_DXFER_NONE;
                    xfer = 0;
                }
                WriteMode::VerifyBytchk01 => {
                    cdb.bytes[0] = if short { 0x2f } else { 0x8f };
                    cdb.bytes[1] |= 0x02;
                }
                WriteMode::VerifyBytchk11 => {
                    cdb.bytes[0] = if short { 0x2f } else { 0x8f };
                    cdb.bytes[1] |= 0x06;
                    xfer = info.bs;
                }
            },
            Op::Rw(Ddir::Trim) => {
                // UNMAP with one block descriptor (the engine's depth is 1).
                let mut c = Cdb::new(10);
                c.bytes[0] = 0x42;
                c.bytes[7..9].copy_from_slice(&24u16.to_be_bytes());
                let p = &mut self.unmap;
                *p = [0; 24];
                p[0..2].copy_from_slice(&22u16.to_be_bytes());
                p[2..4].copy_from_slice(&16u16.to_be_bytes());
                p[8..16].copy_from_slice(&lba.to_be_bytes());
                p[16..20].copy_from_slice(&blocks.to_be_bytes());
                // SAFETY: the parameter list is this engine's own 24 bytes.
                let r = unsafe { send(io.fd, &c, SG_DXFER_TO_DEV, p.as_mut_ptr(), 24, 0) };
                io.result = if r < 0 { r } else { io.len as i64 };
                return Ok(Queued::Completed);
            }
            Op::Sync { .. } => unreachable!("handled above"),
        }
        if with_lba {
            set_lba(&mut cdb, lba, blocks);
        }
        let buf = if xfer == 0 {
            std::ptr::null_mut()
        } else {
            io.buf
        };
        // SAFETY: `io.buf` is valid for `io.len` >= `xfer` bytes (the queue contract).
        let r = unsafe { send(io.fd, &cdb, dir, buf, xfer, flags) };
        // A command that moved one block (WRITE SAME) or none (VERIFY) did the whole I/O.
        io.result = if r < 0 { r } else { io.len as i64 };
        Ok(Queued::Completed)
    }
}

impl super::spec::Declared for Sg {
    type Opts = SgOpts;
    const SPECS: &'static [Spec] = &[Spec::new("sg", "SCSI generic passthrough", Flags::SYNC)
        .options(&[HIPRI, READFUA, WRITEFUA, SG_WRITE_MODE, STREAM_ID])];
    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<SgOpts, JobError> {
        let mode = match r.word(&SG_WRITE_MODE).as_str() {
            "write_and_verify" | "verify" => WriteMode::WriteVerify,
            "write_same" | "same" => WriteMode::WriteSame,
            "write_same_ndob" => WriteMode::WriteSameNdob,
            "verify_bytchk_00" => WriteMode::VerifyBytchk00,
            "verify_bytchk_01" => WriteMode::VerifyBytchk01,
            "verify_bytchk_11" => WriteMode::VerifyBytchk11,
            "write_stream" => WriteMode::WriteStream,
            _ => WriteMode::Write,
        };
        let stream = r.num(&STREAM_ID)?;
        let stream_id = u16::try_from(stream).map_err(|_| {
            r.invalid(
                &STREAM_ID,
                format!("stream_id={stream}: expected a SCSI stream id, 0 to 65535"),
            )
        })?;
        Ok(SgOpts {
            hipri: r.bool(&HIPRI)?,
            readfua: r.bool(&READFUA)?,
            writefua: r.bool(&WRITEFUA)?,
            mode,
            stream_id,
        })
    }
    fn build(o: &SgOpts) -> Self {
        Sg {
            opts: *o,
            files: Vec::new(),
            unmap: [0; 24],
        }
    }
    fn char_device_size(_: &SgOpts, path: &str) -> Option<io::Result<u64>> {
        Some(device_size(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_the_kernels_size() {
        // struct sg_io_hdr is 88 bytes on 64-bit Linux.
        assert_eq!(std::mem::size_of::<SgIoHdr>(), 88);
    }

    #[test]
    fn ten_and_sixteen_byte_lbas() {
        let mut c = Cdb::new(10);
        set_lba(&mut c, 0x0102_0304, 8);
        assert_eq!(&c.bytes[2..9], &[1, 2, 3, 4, 0, 0, 8]);
        let mut c = Cdb::new(16);
        set_lba(&mut c, 0x1_0000_0000, 0x10000);
        assert_eq!(&c.bytes[2..14], &[0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn a_regular_file_is_refused() {
        let f = std::fs::File::open("/proc/self/status").unwrap();
        let e = is_block(std::os::fd::AsRawFd::as_raw_fd(&f)).unwrap_err();
        assert!(e.to_string().contains("SCSI generic"), "{e}");
    }
}
