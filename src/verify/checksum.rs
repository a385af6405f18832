//! The per-block checksums of fio's verify methods, byte for byte as fio 3.33 stores them,
//! so that data written by either program checks out in the other.
//!
//! Most methods are the textbook algorithms from well-kept crates (crc32c with SSE4.2/ARMv8
//! instructions, md-5, sha1, sha2's block function with SHA-NI, sha3, xxhash-rust). A few of
//! fio's variants differ from the textbook and are reproduced here on purpose:
//! - crc32c: the register is not inverted at the end (fio stores `!crc32c(data)`).
//! - crc32: MSB-first polynomial 0x04c11db7, initial value 0, no final inversion.
//! - crc64: LSB-first polynomial 0x95ac9329ac4bc9b5 ("Jones"), initial value 0.
//! - sha1: the five state words are stored in host (little-endian) order.
//! - sha256: the bit length is appended little-endian, and the 64-byte area holds the low
//!   byte of each state word followed by the rest of the last compressed block.
//! - sha512: fio before 3.39 never finalises it; the 128-byte area is the context's block
//!   buffer after the data went through (the tail of the data over the start of the first
//!   block). fio 3.39 finalises it (commit 3ee53198): the area holds the standard digest
//!   over the first half of the context's last padded block, whose second half stays.

use crc::{Algorithm, Crc, Table};
use md5::Digest;
use sha2::digest::generic_array::GenericArray;

use crate::defs::release::FioRelease;
use crate::defs::verify_method::Method;

/// The checksums themselves (the method's names and sizes are `defs::verify_method`'s).
impl Method {
    /// [`Method::compute`] as the fio of `release` stores it: sha512 is finished from
    /// 3.39 on, unfinished before.
    pub fn compute_in(self, release: FioRelease, data: &[u8], out: &mut [u8]) {
        if self == Method::Sha512 && sha512_finished(release) {
            sha512_final_fio(data, &mut out[..self.sum_len()]);
        } else {
            self.compute(data, out);
        }
    }

    /// [`Method::defined_len`] in `release`: a finished sha512 defines its whole area.
    pub fn defined_len_in(self, release: FioRelease, data_len: usize) -> usize {
        if self == Method::Sha512 && sha512_finished(release) {
            self.sum_len()
        } else {
            self.defined_len(data_len)
        }
    }

    /// Computes the method's stored checksum of `data` into `out[..self.sum_len()]`.
    /// Bytes of `out` the method leaves undefined are left as they were.
    pub fn compute(self, data: &[u8], out: &mut [u8]) {
        let out = &mut out[..self.sum_len()];
        match self {
            Method::Crc32c | Method::Crc32cIntel => {
                out.copy_from_slice(&crc32c_fio(data).to_le_bytes())
            }
            Method::Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
            Method::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
            Method::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
            Method::Crc7 => out[0] = CRC7.checksum(data),
            Method::Xxhash => {
                out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes())
            }
            Method::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
            Method::Sha1 => {
                let d = sha1::Sha1::digest(data);
                for (o, w) in out.chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                    o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
                }
            }
            Method::Sha256 => sha256_fio(data, out),
            Method::Sha512 => sha512_fio(data, out),
            Method::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
            Method::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
            Method::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
            Method::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
            _ => {}
        }
    }
}

/// fio's crc32c: the Castagnoli CRC without the final inversion. It also guards the header.
#[inline]
pub fn crc32c_fio(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

const CRC32_FIO: Algorithm<u32> = Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0,
    residue: 0,
};

const CRC64_FIO: Algorithm<u64> = Algorithm {
    width: 64,
    // 0x95ac9329ac4bc9b5 bit-reversed: the same polynomial written MSB-first.
    poly: 0xad93_d235_94c9_35a9,
    init: 0,
    refin: true,
    refout: true,
    xorout: 0,
    check: 0,
    residue: 0,
};

static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC32_FIO);
static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&CRC64_FIO);
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&crc::CRC_16_ARC);
static CRC7: Crc<u8, Table<1>> = Crc::<u8, Table<1>>::new(&crc::CRC_7_MMC);

const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

fn compress(state: &mut [u32; 8], blocks: &[u8]) {
    // Feed whole 64-byte blocks in batches so the SHA-NI path sees long runs.
    let mut batch = [GenericArray::default(); 16];
    for group in blocks.chunks(64 * 16) {
        let n = group.len() / 64;
        for (slot, b) in batch.iter_mut().zip(group.chunks_exact(64)) {
            slot.copy_from_slice(b);
        }
        sha2::compress256(state, &batch[..n]);
    }
}

/// fio's sha256 variant (see the module comment) into a 64-byte area.
fn sha256_fio(data: &[u8], out: &mut [u8]) {
    let mut st = SHA256_IV;
    let full = data.len() / 64 * 64;
    compress(&mut st, &data[..full]);
    let tail = &data[full..];
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    if tail.len() >= 56 {
        compress(&mut st, &last);
        last = [0u8; 64];
    }
    let bits = (data.len() as u32 as u64) << 3;
    last[56..].copy_from_slice(&bits.to_le_bytes());
    compress(&mut st, &last);
    for (i, w) in st.iter().enumerate() {
        last[i] = *w as u8;
    }
    out[..64].copy_from_slice(&last);
}

/// True when `release`'s sha512 is finished (fio 3.39 on).
fn sha512_finished(release: FioRelease) -> bool {
    release >= FioRelease::V3_39
}

/// fio 3.39's finished sha512 into a 128-byte area: the digest, then bytes 64..128 of the
/// last 128-byte block of the padded message (the data's tail, the 0x80 byte, zeros and
/// the length in bits, big-endian, in its last 16 bytes), which its context keeps there.
fn sha512_final_fio(data: &[u8], out: &mut [u8]) {
    out[..64].copy_from_slice(&sha2::Sha512::digest(data));
    let len = data.len();
    let padded = (len + 1 + 16).div_ceil(128) * 128;
    let bits = (len as u128) * 8;
    for (k, o) in out[64..128].iter_mut().enumerate() {
        let at = padded - 64 + k;
        *o = if at < len {
            data[at]
        } else if at == len {
            0x80
        } else if at >= padded - 16 {
            bits.to_be_bytes()[at - (padded - 16)]
        } else {
            0
        };
    }
}

/// fio's unfinished sha512 (see the module comment) into a 128-byte area.
fn sha512_fio(data: &[u8], out: &mut [u8]) {
    let len = data.len();
    if len < 128 {
        out[..len].copy_from_slice(data);
        return;
    }
    let rem = len % 128;
    out[..128].copy_from_slice(&data[..128]);
    out[..rem].copy_from_slice(&data[len - rem..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::verify_method::METHODS;

    #[test]
    fn crc_parameters_check_out() {
        // fio's crc7 table starts 0x00, 0x09, 0x12, 0x1b: crc7 of the bytes 0..3.
        assert_eq!(CRC7.checksum(&[1]), 0x09);
        assert_eq!(CRC7.checksum(&[3]), 0x1b);
        // fio's crc16 table has 0xc0c1 at index 1, its crc64 table 0x7ad870c830358979.
        assert_eq!(CRC16.checksum(&[1]), 0xc0c1);
        assert_eq!(CRC64.checksum(&[1]), 0x7ad8_70c8_3035_8979);
        assert_eq!(CRC32.checksum(&[1]), 0x04c1_1db7);
    }

    #[test]
    fn numbering_round_trips() {
        for (name, m) in METHODS {
            assert_eq!(Method::from_number(*m as u16), Some(*m), "{name}");
            assert_eq!(Method::from_name(name), Some(*m));
        }
    }
}
