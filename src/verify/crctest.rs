//! `--crctest[=list]`: checksum throughput, as fio's flag of the same name measures it
//! (256 MiB through each hash, in 128 KiB pieces, one line `name: N MiB/sec` each), so the
//! two programs' verify costs can be compared side by side (see `bench/crc.py`).

use crate::buffer::fill::fill_random;
use crate::defs::verify_method::Method;
use std::hint::black_box;
use std::time::Instant;

/// Bytes hashed per call.
const CHUNK: usize = 128 * 1024;
/// Calls per hash: 256 MiB in all.
const ROUNDS: usize = 2048;

/// A hash `--crctest` can time: a verify method, or one of fio's internal hashes.
#[derive(Clone, Copy)]
enum Hash {
    Verify(Method),
    Murmur3,
    Jhash,
    Fnv,
}

/// fio's order and spelling.
const TESTS: &[(&str, Hash)] = &[
    ("md5", Hash::Verify(Method::Md5)),
    ("crc64", Hash::Verify(Method::Crc64)),
    ("crc32", Hash::Verify(Method::Crc32)),
    ("crc32c", Hash::Verify(Method::Crc32c)),
    ("crc16", Hash::Verify(Method::Crc16)),
    ("crc7", Hash::Verify(Method::Crc7)),
    ("sha1", Hash::Verify(Method::Sha1)),
    ("sha256", Hash::Verify(Method::Sha256)),
    ("sha512", Hash::Verify(Method::Sha512)),
    ("xxhash", Hash::Verify(Method::Xxhash)),
    ("murmur3", Hash::Murmur3),
    ("jhash", Hash::Jhash),
    ("fnv", Hash::Fnv),
    ("sha3-224", Hash::Verify(Method::Sha3_224)),
    ("sha3-256", Hash::Verify(Method::Sha3_256)),
    ("sha3-384", Hash::Verify(Method::Sha3_384)),
    ("sha3-512", Hash::Verify(Method::Sha3_512)),
];

/// Runs the test for the comma-separated `list` (empty = all; `help`/`list` names them).
/// Returns false when nothing in the list is known (after naming what is).
pub fn run(list: &str) -> bool {
    if list == "help" || list == "list" {
        list_names();
        return true;
    }
    let wanted: Vec<&(&str, Hash)> = if list.is_empty() {
        TESTS.iter().collect()
    } else {
        let names: Vec<&str> = list.split(',').collect();
        TESTS.iter().filter(|(n, _)| names.contains(n)).collect()
    };
    if wanted.is_empty() {
        eprintln!("iobench: unknown hash `{list}`. Available:");
        list_names();
        return false;
    }
    let mut buf = vec![0u8; CHUNK];
    fill_random(&mut buf, 0x8989);
    let mut first = true;
    for (name, hash) in wanted {
        if first {
            // Touch the data and warm the CPU up before the first measurement.
            let t = Instant::now();
            while t.elapsed().as_millis() < 100 {
                black_box(&buf);
            }
            time(*hash, &buf, 1);
            first = false;
        }
        let t = Instant::now();
        time(*hash, &buf, ROUNDS);
        let us = t.elapsed().as_micros() as f64;
        let pre = if name.len() >= 7 { "\t" } else { "\t\t" };
        if us > 0.0 {
            let mib = (CHUNK * ROUNDS) as f64 / us / (1.024 * 1.024);
            println!("{name}:{pre}{mib:8.2} MiB/sec");
        } else {
            println!("{name}:inf MiB/sec");
        }
    }
    true
}

fn list_names() {
    for (n, _) in TESTS {
        println!("{n}");
    }
}

/// Hashes `buf` `rounds` times, keeping the results alive so nothing is optimised away.
fn time(hash: Hash, buf: &[u8], rounds: usize) {
    let mut out = [0u8; crate::defs::verify_method::MAX_SUM];
    let mut acc = 0u64;
    for _ in 0..rounds {
        let b = black_box(buf);
        match hash {
            Hash::Verify(m) => {
                m.compute(b, &mut out[..m.sum_len()]);
                black_box(&out);
            }
            Hash::Murmur3 => acc = acc.wrapping_add(murmur3(b, 0x8989) as u64),
            Hash::Jhash => acc = acc.wrapping_add(jhash(b, 0x8989) as u64),
            Hash::Fnv => acc = acc.wrapping_add(fnv(b, 0x8989)),
        }
    }
    black_box(acc);
}

/// MurmurHash3, the 32-bit x86 variant.
pub fn murmur3(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        let k = u32::from_le_bytes([b[0], b[1], b[2], b[3]])
            .wrapping_mul(C1)
            .rotate_left(15)
            .wrapping_mul(C2);
        h = (h ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &x) in tail.iter().enumerate() {
            k |= (x as u32) << (8 * i);
        }
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Bob Jenkins' lookup3 hash over bytes (the kernel's `jhash`).
pub fn jhash(data: &[u8], seed: u32) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c) ^ c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a) ^ a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b) ^ b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c) ^ c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a) ^ a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b) ^ b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn fin(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c = (*c ^ *b).wrapping_sub(b.rotate_left(14));
        *a = (*a ^ *c).wrapping_sub(c.rotate_left(11));
        *b = (*b ^ *a).wrapping_sub(a.rotate_left(25));
        *c = (*c ^ *b).wrapping_sub(b.rotate_left(16));
        *a = (*a ^ *c).wrapping_sub(c.rotate_left(4));
        *b = (*b ^ *a).wrapping_sub(a.rotate_left(14));
        *c = (*c ^ *b).wrapping_sub(b.rotate_left(24));
    }
    let word = |b: &[u8]| {
        let mut w = [0u8; 4];
        w[..b.len()].copy_from_slice(b);
        u32::from_le_bytes(w)
    };
    let init = 0xdead_beefu32
        .wrapping_add(data.len() as u32)
        .wrapping_add(seed);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    let n = rest.len();
    a = a.wrapping_add(word(&rest[..n.min(4)]));
    if n > 4 {
        b = b.wrapping_add(word(&rest[4..n.min(8)]));
    }
    if n > 8 {
        c = c.wrapping_add(word(&rest[8..n]));
    }
    fin(&mut a, &mut b, &mut c);
    c
}

/// 64-bit FNV-1 over little-endian 64-bit words, with the last partial word taken
/// byte by byte (as fio's hashing helper does).
pub fn fnv(data: &[u8], mut h: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        h = h.wrapping_mul(PRIME);
        h ^= u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        h = h.wrapping_mul(PRIME);
        h ^= tail.iter().fold(0u64, |v, &b| (v << 8) | b as u64);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_known_values() {
        assert_eq!(murmur3(b"", 0), 0);
        assert_eq!(murmur3(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3(b"hello", 0), 0x248b_fa47);
        assert_eq!(
            murmur3(b"The quick brown fox jumps over the lazy dog", 0),
            0x2e4f_f723
        );
    }

    #[test]
    fn jhash_matches_lookup3() {
        // hashlittle("", 0) and hashlittle("Four score and seven years ago", 0).
        assert_eq!(jhash(b"", 0), 0xdead_beef);
        assert_eq!(jhash(b"Four score and seven years ago", 0), 0x1777_0551);
    }
}
