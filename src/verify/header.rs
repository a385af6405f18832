//! fio's verify block header, little-endian as fio writes it on x86 and ARM, in the two
//! layouts of [`HeaderLayout`]:
//!
//! - fio 3.33 to 3.40 (40 bytes): magic 0xacca, verify_type (16 bits), len, rand_seed,
//!   offset, time_sec, time_nsec, thread, numberio (16 bits), crc32;
//! - fio 3.41 on (48 bytes): magic, version (0x81), verify_type (8 bits), len, rand_seed,
//!   offset, time_sec, time_nsec, numberio (64 bits), thread, two bytes of padding, crc32.
//!
//! The crc is fio's crc32c variant of every byte before it, padding included (fio leaves
//! there whatever the buffer held, so writing a header leaves those bytes alone).

use super::checksum::crc32c_fio;
pub use crate::defs::verify_method::{HeaderLayout, HEADER_VERSION};

/// fio's header magic.
pub const MAGIC: u16 = 0xacca;

/// One decoded header. In the plain layout `version` is 0 and `numberio` has 16 bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u16,
    pub version: u8,
    pub verify_type: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u64,
    pub crc32: u32,
}

impl HeaderLayout {
    /// A write number as this layout stores it (fio 3.33's header keeps its low 16 bits).
    pub fn numberio(self, n: u64) -> u64 {
        match self {
            HeaderLayout::Plain => n & 0xffff,
            HeaderLayout::Versioned => n,
        }
    }
}

impl Header {
    /// Writes the header into `out[..layout.len()]`, computing its crc. `version` is
    /// the layout's (set here).
    pub fn write(&mut self, layout: HeaderLayout, out: &mut [u8]) {
        let o = &mut out[..layout.len()];
        o[0..2].copy_from_slice(&self.magic.to_le_bytes());
        match layout {
            HeaderLayout::Plain => {
                self.version = 0;
                o[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
            }
            HeaderLayout::Versioned => {
                self.version = HEADER_VERSION;
                o[2] = HEADER_VERSION;
                o[3] = self.verify_type as u8;
            }
        }
        o[4..8].copy_from_slice(&self.len.to_le_bytes());
        o[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        o[16..24].copy_from_slice(&self.offset.to_le_bytes());
        o[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        o[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        match layout {
            HeaderLayout::Plain => {
                o[32..34].copy_from_slice(&self.thread.to_le_bytes());
                o[34..36].copy_from_slice(&(self.numberio as u16).to_le_bytes());
            }
            HeaderLayout::Versioned => {
                o[32..40].copy_from_slice(&self.numberio.to_le_bytes());
                o[40..42].copy_from_slice(&self.thread.to_le_bytes());
            }
        }
        let c = layout.crc_len();
        self.crc32 = crc32c_fio(&o[..c]);
        o[c..c + 4].copy_from_slice(&self.crc32.to_le_bytes());
    }

    /// Reads a header in `layout` from `b` (zeroes where `b` is too short).
    pub fn read(layout: HeaderLayout, b: &[u8]) -> Header {
        let at = |i: usize, n: usize| -> u64 {
            let mut w = [0u8; 8];
            if let Some(s) = b.get(i..i + n) {
                w[..n].copy_from_slice(s);
            }
            u64::from_le_bytes(w)
        };
        let c = layout.crc_len();
        let (version, verify_type, thread, numberio) = match layout {
            HeaderLayout::Plain => (0, at(2, 2) as u16, at(32, 2) as u16, at(34, 2)),
            HeaderLayout::Versioned => {
                (at(2, 1) as u8, at(3, 1) as u16, at(40, 2) as u16, at(32, 8))
            }
        };
        Header {
            magic: at(0, 2) as u16,
            version,
            verify_type,
            len: at(4, 4) as u32,
            rand_seed: at(8, 8),
            offset: at(16, 8),
            time_sec: at(24, 4) as u32,
            time_nsec: at(28, 4) as u32,
            thread,
            numberio,
            crc32: at(c, 4) as u32,
        }
    }

    /// The crc the header in `b` should carry, in `layout`.
    pub fn computed_crc(layout: HeaderLayout, b: &[u8]) -> u32 {
        crc32c_fio(&b[..layout.crc_len().min(b.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            magic: MAGIC,
            version: 0,
            verify_type: 5,
            len: 4096,
            rand_seed: 7,
            offset: 8192,
            time_sec: 1,
            time_nsec: 2,
            thread: 1,
            numberio: 3,
            crc32: 0,
        }
    }

    #[test]
    fn round_trips() {
        let mut h = sample();
        let mut b = [0u8; 40];
        h.write(HeaderLayout::Plain, &mut b);
        assert_eq!(Header::read(HeaderLayout::Plain, &b), h);
        assert_eq!(Header::computed_crc(HeaderLayout::Plain, &b), h.crc32);
        assert_eq!(&b[..2], &[0xca, 0xac]);
    }

    /// The first 48 bytes fio 3.41 wrote (`--rw=write --verify=md5 --bs=4k`, first
    /// block): magic, version 0x81, md5 (2), len 4096, the seed, offset 0, the times,
    /// numberio 0, thread 1, two padding bytes of the random fill, the crc.
    #[test]
    fn reads_fio_3_41s_header() {
        let b: [u8; 48] = [
            0xca, 0xac, 0x81, 0x02, 0x00, 0x10, 0x00, 0x00, 0x3c, 0x54, 0x09, 0xc5, 0x01, 0xcc,
            0xa4, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x6b, 0xf5, 0xa9, 0x06, 0, 0, 0, 0, 0,
            0, 0, 0, 0x01, 0x00, 0x2e, 0x68, 0x2a, 0x2f, 0x55, 0xb7,
        ];
        let h = Header::read(HeaderLayout::Versioned, &b);
        assert_eq!((h.magic, h.version, h.verify_type), (MAGIC, 0x81, 2));
        assert_eq!((h.len, h.offset, h.numberio, h.thread), (4096, 0, 0, 1));
        assert_eq!(h.rand_seed, 0x00a4_cc01_c509_543c);
        assert_eq!(Header::computed_crc(HeaderLayout::Versioned, &b), h.crc32);
        // Written again over the same padding, it is the same 48 bytes.
        let mut again = b;
        again[..42].fill(0);
        let mut w = h;
        w.write(HeaderLayout::Versioned, &mut again);
        assert_eq!(again, b);
    }

    #[test]
    fn the_versioned_layout_keeps_64_bits_of_numberio() {
        let mut h = sample();
        h.numberio = 0x1_0002;
        let mut b = [0u8; 48];
        h.write(HeaderLayout::Versioned, &mut b);
        assert_eq!(Header::read(HeaderLayout::Versioned, &b).numberio, 0x1_0002);
        let mut p = [0u8; 40];
        h.write(HeaderLayout::Plain, &mut p);
        assert_eq!(Header::read(HeaderLayout::Plain, &p).numberio, 2);
        assert_eq!(HeaderLayout::Plain.numberio(0x1_0002), 2);
    }
}
