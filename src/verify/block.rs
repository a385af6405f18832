//! Writing verify data into a block and checking a block read back, with fio's layout:
//! per interval a header, the method's checksum, then data (optionally with the header
//! moved `verify_offset` bytes in), and fio's messages when a check fails.

use super::header::{Header, HeaderLayout, HEADER_VERSION, MAGIC};
use crate::buffer::fill::Filler;
use crate::defs::release::FioRelease;
use crate::defs::verify_method::{Method, MAX_SUM};
use crate::job::verifyopts::VerifyOpts;
use std::fmt::Write as _;

/// What goes into a written block's headers besides its offset.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamp {
    pub seed: u64,
    pub numberio: u64,
    pub thread: u16,
    pub time_sec: u32,
    pub time_nsec: u32,
}

/// What a read-back block is expected to carry, when known.
#[derive(Debug, Clone, Copy, Default)]
pub struct Expect {
    pub numberio: Option<u64>,
    pub seed: Option<u64>,
}

/// A failed check: the text to print and, with `verify_dump`, files to leave behind.
#[derive(Debug, Default)]
pub struct Failure {
    pub message: String,
    pub dumps: Vec<(String, Vec<u8>)>,
    /// True when the header names another offset: the block is misplaced, not rotten.
    pub misplaced: bool,
}

/// Bytes per header for a block of `len` bytes.
pub fn hdr_inc(o: &VerifyOpts, len: usize) -> usize {
    if o.interval > 0 && (o.interval as usize) <= len {
        o.interval as usize
    } else {
        len
    }
}

fn swap_header(chunk: &mut [u8], at: usize, n: usize) {
    if at == 0 || n == 0 || at + n > chunk.len() {
        return;
    }
    let (a, b) = chunk.split_at_mut(at);
    a[..n].swap_with_slice(&mut b[..n]);
}

/// Fills a write buffer with data and fio's headers for a block at `offset`.
pub fn fill(o: &VerifyOpts, filler: &Filler, buf: &mut [u8], offset: u64, st: &Stamp) {
    match &o.pattern {
        Some(p) if o.pattern_interval > 0 => {
            // `verify_pattern_interval`: the pattern starts again every this many bytes,
            // its `%o` the offset of where it starts.
            let every = o.pattern_interval as usize;
            for (k, piece) in buf.chunks_mut(every).enumerate() {
                p.fill(piece, offset + (k * every) as u64);
            }
        }
        Some(p) => p.fill(buf, offset),
        None => filler.fill_seeded(buf, st.seed),
    }
    let m = o.method;
    if !m.has_header() {
        return;
    }
    let inc = hdr_inc(o, buf.len());
    let layout = o.layout;
    let hs = m.hdr_size(layout);
    // fio's lines name the I/O unit; here its buffer stands for it.
    let io_u = buf.as_ptr();
    for (i, chunk) in buf.chunks_mut(inc).enumerate() {
        if chunk.len() <= hs {
            break;
        }
        let mut h = Header {
            magic: MAGIC,
            version: 0,
            verify_type: m as u16,
            len: inc as u32,
            rand_seed: st.seed,
            offset: offset + i as u64 * o.interval as u64,
            time_sec: st.time_sec,
            time_nsec: st.time_nsec,
            thread: st.thread,
            numberio: st.numberio,
            crc32: 0,
        };
        h.write(layout, chunk);
        if m.has_sum() {
            crate::dprint!(
                crate::debug::Cat::Verify,
                "fill {} io_u {io_u:p}, len {inc}",
                m.name()
            );
        }
        let (head, data) = chunk.split_at_mut(hs);
        m.compute_in(o.release, data, &mut head[layout.len()..]);
        swap_header(chunk, o.offset as usize, hs);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

fn base_name(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// The first byte of `chunk` (the interval at `at` of its block, whose header and sum
/// take `hs` bytes) that is not the pattern: (its place as fio counts it, from the start
/// of the stretch of pattern it is in, the byte read, the byte wanted). With
/// `verify_pattern_interval` the pattern starts again at every multiple of the interval
/// from the block's start, so each stretch is compared on its own, as fio does.
fn pattern_mismatch(
    o: &VerifyOpts,
    p: &crate::defs::datapattern::DataPattern,
    offset: u64,
    at: usize,
    hs: usize,
    chunk: &[u8],
) -> Option<(usize, u8, u8)> {
    let mut pat = Vec::new();
    let end = at + chunk.len();
    let mut pos = at + hs;
    while pos < end {
        let (base, stop) = match o.pattern_interval as usize {
            0 => (0, end),
            every => {
                let base = pos / every * every;
                (base, (base + every).min(end))
            }
        };
        p.with_offset(offset + base as u64, &mut pat);
        let phase = (pos - base) % pat.len();
        let stretch = &chunk[pos - at..stop - at];
        if let Some(k) = crate::defs::datapattern::first_mismatch(&pat, phase, stretch) {
            return Some((k, stretch[k], pat[(phase + k) % pat.len()]));
        }
        pos = stop;
    }
    None
}

/// Checks a block read back from `offset` of `file`; the buffer is restored to on-disk
/// layout only where the check needs it. `flags` is what fio prints as the request's flags.
#[allow(clippy::too_many_arguments)]
pub fn check(
    o: &VerifyOpts,
    filler: &Filler,
    buf: &mut [u8],
    offset: u64,
    expect: Expect,
    file: &str,
    flags: u32,
) -> Result<(), Failure> {
    let len = buf.len();
    let inc = hdr_inc(o, len);
    let layout = o.layout;
    let hs = o.method.hdr_size(layout);
    let mut first: Option<Failure> = None;
    for i in 0..len.div_ceil(inc) {
        let at = i * inc;
        let chunk_off = offset + at as u64;
        let end = (at + inc).min(len);
        swap_header(&mut buf[at..end], o.offset as usize, hs);
        let chunk = &buf[at..end];
        let where_ = |l: usize| {
            format!(
                " at file {file} offset {chunk_off}, length {l} (requested block: offset={offset}, length={len})"
            )
        };
        if o.method.has_header() {
            let h = Header::read(layout, chunk);
            let want_off = offset + i as u64 * o.interval as u64;
            let mut misplaced = false;
            let bad = if h.magic != MAGIC {
                Some(format!(
                    "verify: bad magic header {:x}, wanted {:x}",
                    h.magic, MAGIC
                ))
            } else if layout == HeaderLayout::Versioned && h.version != HEADER_VERSION {
                Some(format!(
                    "verify: unsupported header version {:x}, wanted {:x}. Are you trying to verify across versions of fio?",
                    h.version, HEADER_VERSION
                ))
            } else if h.len as usize != inc {
                Some(format!(
                    "verify: bad header length {}, wanted {}",
                    h.len, inc
                ))
            } else if expect.seed.is_some_and(|s| s != h.rand_seed) {
                Some(format!(
                    "verify: bad header rand_seed {}, wanted {}",
                    h.rand_seed,
                    expect.seed.unwrap_or(0)
                ))
            } else if h.offset != want_off {
                misplaced = true;
                Some(format!(
                    "verify: bad header offset {}, wanted {}",
                    h.offset, offset
                ))
            } else if expect
                .numberio
                .is_some_and(|n| layout.numberio(n) != h.numberio)
            {
                Some(format!(
                    "verify: bad header numberio {}, wanted {}",
                    h.numberio,
                    layout.numberio(expect.numberio.unwrap_or(0))
                ))
            } else if Header::computed_crc(layout, chunk) != h.crc32 {
                Some(format!(
                    "verify: bad header crc {:x}, calculated {:x}",
                    h.crc32,
                    Header::computed_crc(layout, chunk)
                ))
            } else {
                None
            };
            if let Some(mut message) = bad {
                message.push_str(&where_(inc));
                message.push('\n');
                if misplaced {
                    let _ = writeln!(
                        message,
                        "verify: misplaced block: offset {chunk_off} holds the block written for offset {} (a write landed at the wrong place, not bit rot)",
                        h.offset
                    );
                }
                let mut f = Failure {
                    message,
                    dumps: Vec::new(),
                    misplaced,
                };
                if o.dump {
                    f.dumps.push((
                        format!("{}.{chunk_off}.hdr_fail", base_name(file)),
                        chunk.to_vec(),
                    ));
                }
                return Err(f);
            }
        }
        let h = Header::read(layout, chunk);
        let method = match o.method {
            Method::None => Method::from_number(h.verify_type).unwrap_or(Method::None),
            m => m,
        };
        let mut msg = String::new();
        let mut sums: Option<(Vec<u8>, Vec<u8>)> = None;
        if method.has_sum() {
            crate::dprint!(
                crate::debug::Cat::Verify,
                "{} verify io_u {:p}, len {inc}",
                method.name(),
                buf.as_ptr()
            );
            let mut got = [0u8; MAX_SUM];
            let n = method.sum_len();
            let at = layout.len();
            got[..n].copy_from_slice(&chunk[at..at + n]);
            let stored = got;
            method.compute_in(o.release, &chunk[hs..], &mut got);
            let d = method.defined_len_in(o.release, chunk.len() - hs);
            if stored[..d] != got[..d] {
                sums = Some((stored[..n].to_vec(), got[..n].to_vec()));
            }
        } else if let (true, Some(p)) = (
            matches!(
                method,
                Method::Pattern | Method::PatternNoHdr | Method::Meta
            ),
            &o.pattern,
        ) {
            if let Some((k, got, want)) = pattern_mismatch(o, p, offset, at, hs, chunk) {
                let _ = writeln!(
                    msg,
                    "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {}",
                    (got ^ want).count_ones()
                );
                // fio 3.36 counts the header in (fio commit 242c63db).
                let k = if o.release >= FioRelease::V3_36 {
                    k + hs
                } else {
                    k
                };
                let _ = writeln!(msg, "fio: bad pattern block offset {k}");
                sums = Some((Vec::new(), Vec::new()));
            }
        }
        if let Some((want, got)) = sums {
            let name: String = method.name().chars().take(8).collect();
            let _ = writeln!(
                msg,
                "{name}: verify failed at file {file} offset {chunk_off}, length {inc} (requested block: offset={offset}, length={len}, flags={flags:x})"
            );
            if !want.is_empty() {
                let _ = writeln!(msg, "       Expected CRC: {}", hex(&want));
                let _ = writeln!(msg, "       Received CRC: {}", hex(&got));
            }
            let mut f = Failure {
                message: msg,
                dumps: Vec::new(),
                misplaced: false,
            };
            if o.dump {
                let base = base_name(file);
                f.dumps
                    .push((format!("{base}.{chunk_off}.received"), chunk.to_vec()));
                let mut exp = vec![0u8; len];
                let st = Stamp {
                    seed: h.rand_seed,
                    numberio: h.numberio,
                    thread: h.thread,
                    time_sec: h.time_sec,
                    time_nsec: h.time_nsec,
                };
                fill(o, filler, &mut exp, offset, &st);
                swap_header(&mut exp[at..end], o.offset as usize, hs);
                f.dumps.push((
                    format!("{base}.{chunk_off}.expected"),
                    exp[at..end].to_vec(),
                ));
            }
            if o.fatal {
                return Err(f);
            }
            if first.is_none() {
                first = Some(f);
            } else if let Some(f0) = first.as_mut() {
                f0.message.push_str(&f.message);
                f0.dumps.extend(f.dumps);
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Prints a failure as fio does and writes its dump files into the current directory.
pub fn report(f: &Failure) {
    let mut text = f.message.clone();
    for (name, data) in &f.dumps {
        let kind = name.rsplit('.').next().unwrap_or("");
        match std::fs::write(name, data) {
            Ok(()) => {
                let _ = writeln!(text, "       {kind} data dumped as {name}");
            }
            Err(e) => {
                let _ = writeln!(text, "open verify buf file: {e}");
            }
        }
    }
    eprint!("{text}");
}
