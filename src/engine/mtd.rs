//! mtd: raw flash through an MTD character device (`/dev/mtdN`), as fio's mtd engine
//! drives it. The device's geometry (size, erase block, write unit, whether it keeps bad
//! blocks) comes from the kernel's MTD class in sysfs and the MEMGETINFO ioctl; the device
//! is sized from it, where other engines need `size=`. Each I/O is split at erase-block
//! boundaries, as fio splits it, and each piece is a pread or pwrite at its offset, or,
//! for a trim, an erase of its whole erase block (MEMERASE64, MEMERASE on kernels without
//! it). fio's checks are made per piece and fail the I/O the way fio's do: a write not
//! aligned to the write unit, a trim that is not one whole erase block (the block is
//! still erased, as fio erases it), an erase block past the device. A piece that fails
//! with EIO has its erase block marked bad (MEMSETBADBLOCK) on flash that keeps bad
//! blocks, and with `skip_bad` a piece on a block already marked bad (MEMGETBADBLOCK) is
//! not done and fails the I/O with EIO, silently. The engine is synchronous.
//!
//! Messages about a failed request are libmtd's, word for word where they say what the
//! kernel refused, on standard error.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Op, QueueFailure, Queued};
use crate::defs::reader::Reader;
use crate::defs::{opt, Category as C, Ddir, Kind as K, OptDef};
use crate::error::JobError;
use std::io;
use std::os::fd::RawFd;

/// fio's one mtd option.
pub const SKIP_BAD: OptDef = opt(
    "skip_bad",
    K::Bool,
    "Skip operations against known bad blocks.",
)
.def("0")
.cat(C::Engine)
.engines(&["mtd"]);

/// The character devices' major number of MTD (the kernel's MTD_CHAR_MAJOR).
const MTD_MAJOR: u32 = 90;
/// Where the kernel lists MTD devices (fio's libmtd reads its geometry there).
const SYSFS_MTD: &str = "/sys/class/mtd";

// linux/mtd/mtd-abi.h: ioctl numbers, 'M' requests.
/// `_IOR('M', 1, struct mtd_info_user)`.
const MEMGETINFO: libc::c_ulong = 0x8020_4d01;
/// `_IOW('M', 2, struct erase_info_user)`.
const MEMERASE: libc::c_ulong = 0x4008_4d02;
/// `_IOW('M', 11, __kernel_loff_t)`.
const MEMGETBADBLOCK: libc::c_ulong = 0x4008_4d0b;
/// `_IOW('M', 12, __kernel_loff_t)`.
const MEMSETBADBLOCK: libc::c_ulong = 0x4008_4d0c;
/// `_IOW('M', 20, struct erase_info_user64)`.
const MEMERASE64: libc::c_ulong = 0x4010_4d14;

/// MTD types (mtd-abi.h) that keep bad blocks.
const MTD_NANDFLASH: u8 = 4;
const MTD_MLCNANDFLASH: u8 = 8;

/// `struct mtd_info_user`.
#[repr(C)]
#[derive(Default)]
struct MtdInfoUser {
    kind: u8,
    flags: u32,
    size: u32,
    erasesize: u32,
    writesize: u32,
    oobsize: u32,
    padding: u64,
}

/// What fio's engine knows of a device (libmtd's `struct mtd_dev_info`, the fields used).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Geometry {
    /// The device's number N (`/dev/mtdN`), for messages.
    pub num: u32,
    pub size: u64,
    pub eb_size: u32,
    pub eb_cnt: u64,
    /// The write unit: writes must be multiples of it, at multiples of it.
    pub subpage: u32,
    /// The flash keeps bad blocks (NAND): MEMGETBADBLOCK and MEMSETBADBLOCK apply.
    pub bb_allowed: bool,
}

/// A failure to learn a device's geometry: errno and libmtd's message.
fn geo_err(errno: i32, msg: String) -> io::Error {
    io::Error::new(
        io::Error::from_raw_os_error(errno).kind(),
        format!(
            "ioengine=mtd needs an MTD character device (/dev/mtdN): {msg} \
             (mtd_get_dev_info: {})",
            strerror(errno)
        ),
    )
}

/// The text of `errno` without Rust's " (os error N)".
fn strerror(errno: i32) -> String {
    let s = io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn read_sysfs(dir: &std::path::Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The sysfs directory of the MTD device `major:minor`: `Ok(None)` when the kernel lists
/// no MTD device there at all (fio's libmtd then falls back to MEMGETINFO and major 90),
/// `Err` when it lists some but not this one.
fn sysfs_dir(major: u32, minor: u32) -> Result<Option<std::path::PathBuf>, ()> {
    let Ok(rd) = std::fs::read_dir(SYSFS_MTD) else {
        return Ok(None);
    };
    let mut any = false;
    let want = format!("{major}:{minor}");
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(n) = name.to_str().and_then(|s| s.strip_prefix("mtd")) else {
            continue;
        };
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let dir = e.path();
        if read_sysfs(&dir, "name").is_none() {
            continue;
        }
        any = true;
        if read_sysfs(&dir, "dev").as_deref() == Some(want.as_str()) {
            return Ok(Some(dir));
        }
    }
    if any {
        Err(())
    } else {
        Ok(None)
    }
}

/// The geometry of the MTD device at `path`, found as fio's libmtd finds it: the node
/// must be a character device that is one of the kernel's MTD devices.
pub fn geometry(path: &str) -> io::Result<Geometry> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let p = crate::osstr::to_path(path);
    let md = std::fs::metadata(&p).map_err(|e| {
        let n = e.raw_os_error().unwrap_or(libc::ENOENT);
        geo_err(n, format!("cannot get information about \"{path}\""))
    })?;
    if !md.file_type().is_char_device() {
        return Err(geo_err(
            libc::EINVAL,
            format!("\"{path}\" is not a character device"),
        ));
    }
    let (major, minor) = (libc::major(md.rdev()), libc::minor(md.rdev()));
    let dir = match sysfs_dir(major, minor) {
        Ok(d) => d,
        Err(()) => {
            return Err(geo_err(
                libc::ENODEV,
                format!("\"{path}\" ({major}:{minor}) is none of the MTD devices in {SYSFS_MTD}"),
            ))
        }
    };
    if dir.is_none() && major != MTD_MAJOR {
        return Err(geo_err(
            libc::EINVAL,
            format!("\"{path}\" has major number {major}, MTD devices have major {MTD_MAJOR}"),
        ));
    }
    let f = std::fs::File::open(&p).map_err(|e| {
        let n = e.raw_os_error().unwrap_or(libc::EIO);
        geo_err(n, format!("cannot open \"{path}\""))
    })?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    let mut ui = MtdInfoUser::default();
    // SAFETY: MEMGETINFO fills one `struct mtd_info_user`, which `ui` is (repr(C)).
    if unsafe { libc::ioctl(fd, MEMGETINFO as _, &mut ui as *mut MtdInfoUser) } < 0 {
        let n = errno();
        return Err(geo_err(n, "MEMGETINFO ioctl request failed".into()));
    }
    let num = minor / 2;
    let mut g = Geometry {
        num,
        size: ui.size as u64,
        eb_size: ui.erasesize,
        eb_cnt: 0,
        subpage: ui.writesize,
        bb_allowed: matches!(ui.kind, MTD_NANDFLASH | MTD_MLCNANDFLASH),
    };
    match &dir {
        Some(d) => {
            // sysfs has the 64-bit size and the NAND sub-page, which the ioctl lacks.
            let num = |name: &str| read_sysfs(d, name).and_then(|s| s.parse::<u64>().ok());
            if let Some(s) = num("size") {
                g.size = s;
            }
            if let Some(s) = num("subpagesize").and_then(|s| u32::try_from(s).ok()) {
                g.subpage = s;
            }
            if let Some(t) = read_sysfs(d, "type") {
                g.bb_allowed = t == "nand" || t == "mlc-nand";
            }
        }
        None => {
            // Without sysfs, libmtd asks the device whether it keeps bad blocks.
            let mut offs: i64 = 0;
            // SAFETY: MEMGETBADBLOCK reads one loff_t from the pointer.
            let r = unsafe { libc::ioctl(fd, MEMGETBADBLOCK as _, &mut offs as *mut i64) };
            g.bb_allowed = r >= 0 || errno() != libc::EOPNOTSUPP;
        }
    }
    if g.subpage == 0 {
        return Err(geo_err(
            libc::EINVAL,
            format!(
                "mtd{num} ({path}) has insane min. I/O unit size {}",
                g.subpage
            ),
        ));
    }
    if g.eb_size == 0 || g.eb_size < g.subpage {
        return Err(geo_err(
            libc::EINVAL,
            format!("mtd{num} ({path}) has insane eraseblock size {}", g.eb_size),
        ));
    }
    if g.size < g.eb_size as u64 {
        return Err(geo_err(
            libc::EINVAL,
            format!("mtd{num} ({path}) has insane size {}", g.size),
        ));
    }
    g.eb_cnt = g.size / g.eb_size as u64;
    Ok(g)
}

/// The typed options.
#[derive(Debug, Clone, Copy, Default)]
pub struct MtdOpts {
    pub skip_bad: bool,
}

/// The engine: the geometry of each open file, by index.
#[derive(Debug, Default)]
pub struct Mtd {
    opts: MtdOpts,
    files: Vec<Option<(RawFd, Geometry)>>,
    /// MEMERASE64 answered ENOTTY: the kernel predates it, MEMERASE is used.
    no_erase64: bool,
    /// The first failure the engine named in the current I/O (fio's td_verror there).
    named: Option<QueueFailure>,
}

/// libmtd's message for a request the kernel refused: the line and the errno's.
fn sys_errmsg(msg: &str, errno: i32) {
    eprintln!(
        "libmtd: error!: {msg}\n{:8}error {errno} ({})",
        "",
        strerror(errno)
    );
}

/// libmtd's message for a request it refused itself.
fn errmsg(msg: &str) {
    eprintln!("libmtd: error!: {msg}");
}

/// What one piece of an I/O did: `Err(errno)` when it failed, with whether fio's engine
/// then stops the I/O (`true`) or goes on to the next piece.
type Piece = Result<(), (i32, bool)>;

impl Mtd {
    /// The geometry of file `index` open as `fd`, asked again when not known.
    fn geometry_of(&mut self, index: usize, fd: RawFd) -> io::Result<Geometry> {
        if let Some(Some((f, g))) = self.files.get(index) {
            if *f == fd {
                return Ok(*g);
            }
        }
        let g = geometry(&format!("/proc/self/fd/{fd}"))?;
        if index >= self.files.len() {
            self.files.resize(index + 1, None);
        }
        self.files[index] = Some((fd, g));
        Ok(g)
    }

    /// Notes a failure the engine names (the first of the I/O wins, as fio's td_verror).
    fn name(&mut self, errno: i32, func: &'static str, site: &'static str) {
        if self.named.is_none() {
            self.named = Some(QueueFailure::Named { errno, site, func });
        }
    }

    fn valid_eb(g: &Geometry, eb: u64) -> Result<(), i32> {
        if eb >= g.eb_cnt {
            errmsg(&format!(
                "bad eraseblock number {eb}, mtd{} has {} eraseblocks",
                g.num, g.eb_cnt
            ));
            return Err(libc::EINVAL);
        }
        Ok(())
    }

    /// After a failed piece: a block that failed with EIO on flash that keeps bad blocks
    /// is marked bad; elsewhere the marking fails with EINVAL and stops the I/O.
    fn maybe_mark_bad(&mut self, fd: RawFd, g: &Geometry, eb: u64, errno: i32) -> Piece {
        if errno != libc::EIO {
            return Err((errno, false));
        }
        let r = if !g.bb_allowed {
            Err(libc::EINVAL)
        } else {
            Self::valid_eb(g, eb).and_then(|()| {
                let mut seek = (eb * g.eb_size as u64) as i64;
                // SAFETY: MEMSETBADBLOCK reads one loff_t from the pointer.
                let r = unsafe { libc::ioctl(fd, MEMSETBADBLOCK as _, &mut seek as *mut i64) };
                if r < 0 {
                    let n = errno_now();
                    sys_errmsg(
                        &format!(
                            "MEMSETBADBLOCK ioctl failed for eraseblock {eb} (mtd{})",
                            g.num
                        ),
                        n,
                    );
                    Err(n)
                } else {
                    Ok(())
                }
            })
        };
        match r {
            Ok(()) => Err((errno, false)),
            Err(n) => {
                self.name(n, "mtd_mark_bad", "engines/mtd.c:54");
                Err((n, true))
            }
        }
    }

    /// MEMGETBADBLOCK for erase block `eb`: whether it is marked bad.
    fn is_bad(g: &Geometry, fd: RawFd, eb: u64) -> Result<bool, i32> {
        Self::valid_eb(g, eb)?;
        if !g.bb_allowed {
            return Ok(false);
        }
        let mut seek = (eb * g.eb_size as u64) as i64;
        // SAFETY: MEMGETBADBLOCK reads one loff_t from the pointer.
        let r = unsafe { libc::ioctl(fd, MEMGETBADBLOCK as _, &mut seek as *mut i64) };
        if r < 0 {
            let n = errno_now();
            sys_errmsg(
                &format!(
                    "MEMGETBADBLOCK ioctl failed for eraseblock {eb} (mtd{})",
                    g.num
                ),
                n,
            );
            return Err(n);
        }
        Ok(r > 0)
    }

    /// Erases erase block `eb` (the 64-bit request first, as libmtd does).
    fn erase(&mut self, g: &Geometry, fd: RawFd, eb: u64) -> Result<(), i32> {
        Self::valid_eb(g, eb)?;
        let start = eb * g.eb_size as u64;
        let len = g.eb_size as u64;
        if !self.no_erase64 {
            let mut ei: [u64; 2] = [start, len];
            // SAFETY: MEMERASE64 reads one `struct erase_info_user64` (two u64s).
            let r = unsafe { libc::ioctl(fd, MEMERASE64 as _, ei.as_mut_ptr()) };
            if r == 0 {
                return Ok(());
            }
            let n = errno_now();
            if n != libc::ENOTTY {
                sys_errmsg(
                    &format!("MEMERASE64 ioctl failed for eraseblock {eb} (mtd{})", g.num),
                    n,
                );
                return Err(n);
            }
            self.no_erase64 = true;
        }
        let (Ok(s32), Ok(_)) = (u32::try_from(start), u32::try_from(start + len)) else {
            errmsg(&format!(
                "this system can address only {} eraseblocks",
                u32::MAX / g.eb_size
            ));
            return Err(libc::EINVAL);
        };
        let mut ei: [u32; 2] = [s32, g.eb_size];
        // SAFETY: MEMERASE reads one `struct erase_info_user` (two u32s).
        if unsafe { libc::ioctl(fd, MEMERASE as _, ei.as_mut_ptr()) } < 0 {
            let n = errno_now();
            sys_errmsg(
                &format!("MEMERASE ioctl failed for eraseblock {eb} (mtd{})", g.num),
                n,
            );
            return Err(n);
        }
        Ok(())
    }

    /// One piece of an I/O: `len` bytes at `eb_offs` in erase block `eb` (all three in
    /// one tuple), at `buf`.
    ///
    /// # Safety
    ///
    /// `buf` is valid for `len` bytes, writable for a read.
    unsafe fn piece(
        &mut self,
        d: Ddir,
        fd: RawFd,
        g: &Geometry,
        (eb, eb_offs, len): (u64, u32, u32),
        buf: *mut u8,
    ) -> Piece {
        let off = eb * g.eb_size as u64 + eb_offs as u64;
        match d {
            Ddir::Read => {
                let r = Self::valid_eb(g, eb).and_then(|()| {
                    // SAFETY: the caller's contract: `buf` is writable for `len` bytes.
                    let n = unsafe { libc::pread(fd, buf.cast(), len as usize, off as i64) };
                    if n < 0 {
                        let e = errno_now();
                        sys_errmsg(
                            &format!(
                                "cannot read {len} bytes from mtd{} (eraseblock {eb}, offset {eb_offs})",
                                g.num
                            ),
                            e,
                        );
                        Err(e)
                    } else {
                        Ok(())
                    }
                });
                if let Err(e) = r {
                    self.name(e, "mtd_read", "engines/mtd.c:113");
                    return self.maybe_mark_bad(fd, g, eb, e);
                }
                Ok(())
            }
            Ddir::Write => {
                let r = Self::valid_eb(g, eb).and_then(|()| {
                    if eb_offs % g.subpage != 0 {
                        errmsg(&format!(
                            "write offset {eb_offs} is not aligned to mtd{} min. I/O size {}",
                            g.num, g.subpage
                        ));
                        return Err(libc::EINVAL);
                    }
                    if len % g.subpage != 0 {
                        errmsg(&format!(
                            "write length {len} is not aligned to mtd{} min. I/O size {}",
                            g.num, g.subpage
                        ));
                        return Err(libc::EINVAL);
                    }
                    // SAFETY: the caller's contract: `buf` is readable for `len` bytes.
                    let n = unsafe { libc::pwrite(fd, buf.cast(), len as usize, off as i64) };
                    if n != len as isize {
                        let e = if n < 0 { errno_now() } else { libc::EIO };
                        sys_errmsg(
                            &format!(
                                "cannot write {len} bytes to mtd{} (eraseblock {eb}, offset {eb_offs})",
                                g.num
                            ),
                            e,
                        );
                        return Err(e);
                    }
                    Ok(())
                });
                if let Err(e) = r {
                    self.name(e, "mtd_write", "engines/mtd.c:122");
                    return self.maybe_mark_bad(fd, g, eb, e);
                }
                Ok(())
            }
            Ddir::Trim => {
                // fio names a trim that is not one whole erase block, then erases the
                // block all the same.
                let mut failed = None;
                if eb_offs != 0 || len != g.eb_size {
                    self.name(
                        libc::EINVAL,
                        "trim on MTD must be erase block-aligned",
                        "engines/mtd.c:129",
                    );
                    failed = Some(libc::EINVAL);
                }
                if let Err(e) = self.erase(g, fd, eb) {
                    self.name(e, "mtd_erase", "engines/mtd.c:135");
                    return self.maybe_mark_bad(fd, g, eb, e);
                }
                match failed {
                    Some(e) => Err((e, false)),
                    None => Ok(()),
                }
            }
        }
    }
}

/// errno as it is now (after a failed call).
fn errno_now() -> i32 {
    errno()
}

impl Engine for Mtd {
    fn setup(&mut self, s: &super::Setup<'_>) -> io::Result<()> {
        self.files = vec![None; s.files.len()];
        for (i, f) in s.files.iter().enumerate() {
            let name = s.names.get(i).map_or("", |n| n.as_str());
            let g = geometry(name).map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
            self.files[i] = Some((f.fd, g));
        }
        Ok(())
    }

    fn file_opened(&mut self, index: usize, file: super::EngineFile) -> io::Result<()> {
        if let Some(slot) = self.files.get_mut(index) {
            *slot = None;
        }
        self.geometry_of(index, file.fd).map(|_| ())
    }

    fn file_closing(&mut self, index: usize) {
        if let Some(slot) = self.files.get_mut(index) {
            *slot = None;
        }
    }

    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        self.named = None;
        let d = match io.op {
            Op::Rw(d) => d,
            Op::Sync { .. } => {
                // fio's engine takes reads, writes and trims only.
                self.name(
                    libc::EOPNOTSUPP,
                    "operation not supported on mtd",
                    "engines/mtd.c:141",
                );
                io.result = -(libc::EOPNOTSUPP as i64);
                return Ok(Queued::Completed);
            }
        };
        let g = self.geometry_of(io.file as usize, io.fd)?;
        let eb_size = g.eb_size as u64;
        let mut error = 0;
        let mut done = 0usize;
        while done < io.len {
            let at = io.offset + done as u64;
            let eb = at / eb_size;
            let eb_offs = (at % eb_size) as u32;
            let len = (io.len - done).min((eb_size - eb_offs as u64) as usize) as u32;
            let skip = if self.opts.skip_bad {
                match Self::is_bad(&g, io.fd, eb) {
                    Err(e) => {
                        self.name(e, "mtd_is_bad", "engines/mtd.c:68");
                        error = e;
                        break;
                    }
                    Ok(bad) => bad,
                }
            } else {
                false
            };
            if skip {
                // A known bad block fails the I/O without a word.
                error = libc::EIO;
            } else {
                // SAFETY: the queue contract: `io.buf` is valid for `io.len` bytes, and
                // this piece lies within them.
                let r = unsafe { self.piece(d, io.fd, &g, (eb, eb_offs, len), io.buf.add(done)) };
                if let Err((e, stop)) = r {
                    error = e;
                    if stop {
                        break;
                    }
                }
            }
            done += len as usize;
        }
        io.result = if error != 0 {
            -(error as i64)
        } else {
            io.len as i64
        };
        Ok(Queued::Completed)
    }

    fn take_queue_failure(&mut self) -> Option<QueueFailure> {
        Some(self.named.take().unwrap_or(QueueFailure::Silent))
    }
}

impl super::spec::Declared for Mtd {
    type Opts = MtdOpts;
    const SPECS: &'static [Spec] = &[Spec::new("mtd", "raw flash (MTD) devices", Flags::SYNC)
        .options(&[SKIP_BAD])
        .hidden()];
    fn configure(_: &'static Spec, r: &Reader, _: &JobFacts) -> Result<MtdOpts, JobError> {
        Ok(MtdOpts {
            skip_bad: r.bool(&SKIP_BAD)?,
        })
    }
    fn build(o: &MtdOpts) -> Self {
        Mtd {
            opts: *o,
            ..Mtd::default()
        }
    }
    fn char_device_size(_: &MtdOpts, path: &str) -> Option<io::Result<u64>> {
        Some(geometry(path).map(|g| g.size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_struct_is_the_kernels_size() {
        // struct mtd_info_user is 32 bytes; MEMGETINFO encodes that size.
        assert_eq!(std::mem::size_of::<MtdInfoUser>(), 32);
        assert_eq!((MEMGETINFO >> 16) & 0x3fff, 32);
    }

    #[test]
    fn a_regular_file_is_refused() {
        let e = geometry("/proc/self/status").unwrap_err();
        assert!(e.to_string().contains("is not a character device"), "{e}");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_character_device_that_is_no_mtd_is_refused() {
        let e = geometry("/dev/null").unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("MTD devices have major 90") || s.contains("none of the MTD devices"),
            "{s}"
        );
    }

    #[test]
    fn a_missing_node_is_refused() {
        let e = geometry("/dev/no-such-mtd-here").unwrap_err();
        assert!(e.to_string().contains("cannot get information"), "{e}");
    }
}
