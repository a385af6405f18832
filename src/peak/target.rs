//! The file or device a peak thread reads, and where in it each read goes.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

/// An open file or block device with its size.
pub struct Target {
    pub path: String,
    pub fd: RawFd,
    pub size: u64,
    _file: File,
}

impl Target {
    /// Opens `path` read-only, with O_DIRECT when `direct`.
    pub fn open(path: &str, direct: bool) -> io::Result<Self> {
        let flags = if direct { libc::O_DIRECT } else { 0 };
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
        let meta = file.metadata()?;
        let size = if meta.file_type().is_block_device() {
            device_size(&file)?
        } else {
            meta.len()
        };
        if size == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path}: zero size"),
            ));
        }
        Ok(Target {
            path: path.to_string(),
            fd: file.as_raw_fd(),
            size,
            _file: file,
        })
    }
}

/// The size of a block device in bytes (BLKGETSIZE64).
pub fn device_size(file: &File) -> io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid for writes.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Picks block-aligned offsets, random (a 64-bit xorshift, seeded per thread) or sequential.
pub struct OffsetPicker {
    blocks: u64,
    bs: u64,
    random: bool,
    state: u64,
    cursor: u64,
}

impl OffsetPicker {
    pub fn new(size: u64, bs: u64, random: bool, seed: u64) -> Self {
        OffsetPicker {
            blocks: (size / bs.max(1)).max(1),
            bs,
            random,
            state: seed | 1,
            cursor: 0,
        }
    }

    /// The next offset in bytes.
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        let block = if self.random {
            // xorshift64*: cheap and good enough to spread reads over the device.
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            let r = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            ((r as u128 * self.blocks as u128) >> 64) as u64
        } else {
            let b = self.cursor;
            self.cursor += 1;
            if self.cursor == self.blocks {
                self.cursor = 0;
            }
            b
        };
        block * self.bs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_stay_block_aligned_inside_the_target() {
        let mut p = OffsetPicker::new(1 << 20, 512, true, 42);
        for _ in 0..10_000 {
            let o = p.next_offset();
            assert_eq!(o % 512, 0);
            assert!(o + 512 <= 1 << 20);
        }
        let mut s = OffsetPicker::new(2048, 512, false, 0);
        let seq: Vec<u64> = (0..5).map(|_| s.next_offset()).collect();
        assert_eq!(seq, vec![0, 512, 1024, 1536, 0]);
    }
}
