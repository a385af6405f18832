//! fio's 40-byte verify block header, little-endian as fio writes it on x86 and ARM:
//! magic 0xacca, verify_type, len, rand_seed, offset, time_sec, time_nsec, thread,
//! numberio, and a crc32c (fio's variant) of the 36 bytes before it.

use super::checksum::crc32c_fio;
use crate::defs::verify_method::HDR_LEN;

/// fio's header magic.
pub const MAGIC: u16 = 0xacca;

/// One decoded header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u16,
    pub verify_type: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
    pub crc32: u32,
}

impl Header {
    /// Writes the header into `out[..40]`, computing its crc.
    pub fn write(&mut self, out: &mut [u8]) {
        let o = &mut out[..HDR_LEN];
        o[0..2].copy_from_slice(&self.magic.to_le_bytes());
        o[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        o[4..8].copy_from_slice(&self.len.to_le_bytes());
        o[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        o[16..24].copy_from_slice(&self.offset.to_le_bytes());
        o[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        o[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        o[32..34].copy_from_slice(&self.thread.to_le_bytes());
        o[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        self.crc32 = crc32c_fio(&o[..36]);
        o[36..40].copy_from_slice(&self.crc32.to_le_bytes());
    }

    /// Reads a header from `b[..40]`.
    pub fn read(b: &[u8]) -> Header {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Header {
            magic: u16_at(0),
            verify_type: u16_at(2),
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            numberio: u16_at(34),
            crc32: u32_at(36),
        }
    }

    /// The crc the header's first 36 bytes in `b` should carry.
    pub fn computed_crc(b: &[u8]) -> u32 {
        crc32c_fio(&b[..36])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut h = Header {
            magic: MAGIC,
            verify_type: 5,
            len: 4096,
            rand_seed: 7,
            offset: 8192,
            time_sec: 1,
            time_nsec: 2,
            thread: 1,
            numberio: 3,
            crc32: 0,
        };
        let mut b = [0u8; 40];
        h.write(&mut b);
        assert_eq!(Header::read(&b), h);
        assert_eq!(Header::computed_crc(&b), h.crc32);
        assert_eq!(&b[..2], &[0xca, 0xac]);
    }
}
