//! fio's compressed logs (`log_store_compressed`, `--inflate-log`): a `.log.fz` file is a
//! run of zlib streams, one per chunk written out, each holding fio's binary samples
//! (`struct io_sample`: time u64, value u64, ddir u32 with flag bits for offset and
//! priority, priority u16, 2 bytes of padding, bs u64, then the offset u64 when logged;
//! little-endian, 32 or 40 bytes). `--inflate-log` inflates stream after stream and prints
//! the samples as the text log fio would have written, so either tool reads the other's.

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::{Read, Write};

/// fio's flag bits in a sample's ddir word.
const OFFSET_BIT: u32 = 0x8000_0000;
const PRIO_BIT: u32 = 0x4000_0000;

/// Samples in fio's binary layout, times moved by `base`.
pub fn encode(samples: &[super::logs::Sample], offset: bool, prio: bool, base: u64) -> Vec<u8> {
    let size = if offset { 40 } else { 32 };
    let mut out = Vec::with_capacity(samples.len() * size);
    let flags = if offset { OFFSET_BIT } else { 0 } | if prio { PRIO_BIT } else { 0 };
    for s in samples {
        out.extend_from_slice(&(s.time_ms + base).to_le_bytes());
        out.extend_from_slice(&s.value.to_le_bytes());
        out.extend_from_slice(&(u32::from(s.ddir) | flags).to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        out.extend_from_slice(&s.bs.to_le_bytes());
        if offset {
            out.extend_from_slice(&s.offset.to_le_bytes());
        }
    }
    out
}

/// fio's text lines for binary samples (its `flush_samples`).
pub fn to_text(bin: &[u8]) -> String {
    use std::fmt::Write as _;
    let u64_at = |b: &[u8], at: usize| {
        b.get(at..at + 8)
            .map_or(0, |s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
    };
    let mut text = String::new();
    let Some(first) = bin.get(16..20) else {
        return text;
    };
    let word = u32::from_le_bytes(first.try_into().unwrap_or([0; 4]));
    let (offset, prio) = (word & OFFSET_BIT != 0, word & PRIO_BIT != 0);
    let size = if offset { 40 } else { 32 };
    for rec in bin.chunks_exact(size) {
        let ddir =
            u32::from_le_bytes(rec[16..20].try_into().unwrap_or([0; 4])) & !(OFFSET_BIT | PRIO_BIT);
        let priority = u16::from_le_bytes([rec[20], rec[21]]);
        let _ = write!(
            text,
            "{}, {}, {}, {}",
            u64_at(rec, 0),
            u64_at(rec, 8) as i64,
            ddir,
            u64_at(rec, 24)
        );
        if offset {
            let _ = write!(text, ", {}", u64_at(rec, 32));
        }
        // Without log_prio fio prints whether the class is real-time (never, here).
        let _ = if prio {
            writeln!(text, ", 0x{priority:04x}")
        } else {
            writeln!(text, ", {}", u8::from(priority >> 13 == 1))
        };
    }
    text
}

/// `text` as one zlib stream when `zip`, else unchanged.
pub fn maybe_deflate(zip: bool, text: &[u8]) -> std::io::Result<Vec<u8>> {
    if !zip {
        return Ok(text.to_vec());
    }
    let mut enc = ZlibEncoder::new(
        Vec::with_capacity(text.len() / 4 + 64),
        Compression::default(),
    );
    enc.write_all(text)?;
    enc.finish()
}

/// Inflates every zlib stream in `data`, one after another, into their text.
pub fn inflate_all(data: &[u8]) -> std::io::Result<Vec<u8>> {
    if data.is_empty() {
        // fio: "short read on reading log".
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "short read on reading log (empty file)",
        ));
    }
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let mut dec = ZlibDecoder::new(rest);
        dec.read_to_end(&mut out)?;
        let used = dec.total_in() as usize;
        if used == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a zlib stream",
            ));
        }
        rest = &rest[used.min(rest.len())..];
    }
    Ok(out)
}

/// `--inflate-log=FILE`: prints the log's text on stdout. False (after a message) when the
/// file cannot be read or is not fio's compressed log.
pub fn inflate_to_stdout(path: &str) -> bool {
    let bin = std::fs::read(path).and_then(|d| inflate_all(&d));
    match bin {
        Ok(b) => std::io::stdout().write_all(to_text(&b).as_bytes()).is_ok(),
        Err(e) => {
            eprintln!("iobench: --inflate-log: {path}: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_concatenate() {
        let mut file = maybe_deflate(true, b"1, 2, 0, 4096, 0\n").unwrap();
        file.extend(maybe_deflate(true, b"3, 4, 1, 4096, 0\n").unwrap());
        let text = inflate_all(&file).unwrap();
        assert_eq!(text, b"1, 2, 0, 4096, 0\n3, 4, 1, 4096, 0\n");
        assert!(inflate_all(b"plain text").is_err());
    }

    #[test]
    fn binary_samples_print_as_fio_text() {
        let s = crate::stats::logs::Sample {
            time_ms: 5,
            value: 1234,
            ddir: 1,
            bs: 4096,
            offset: 8192,
            issue_ns: 0,
        };
        assert_eq!(
            to_text(&encode(&[s], false, false, 0)),
            "5, 1234, 1, 4096, 0\n"
        );
        assert_eq!(
            to_text(&encode(&[s, s], true, true, 10)),
            "15, 1234, 1, 4096, 8192, 0x0000\n".repeat(2)
        );
    }
}
