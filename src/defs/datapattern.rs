//! Data patterns as fio spells them (`verify_pattern`, `buffer_pattern`): hex numbers
//! (`0xdeadbeef`), decimal numbers (stored little-endian in as few bytes as they need),
//! double-quoted strings, `'file'` contents and the `%o` format (the block's offset, eight
//! bytes little-endian), concatenated without separators.

/// The longest pattern fio 3.33 accepts (later releases: `FioRelease::longest_pattern`).
pub const MAX_PATTERN: usize = 512;

/// A parsed pattern: its bytes, and where `%o` offsets go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataPattern {
    pub bytes: Vec<u8>,
    /// Byte positions in `bytes` where the block offset is pasted (8 bytes each, clipped).
    pub offsets_at: Vec<usize>,
}

impl DataPattern {
    /// Parses fio 3.33's pattern syntax (at most [`MAX_PATTERN`] bytes).
    pub fn parse(text: &str) -> Result<DataPattern, String> {
        Self::parse_within(text, MAX_PATTERN)
    }

    /// Parses fio's pattern syntax into at most `max` bytes; the error says what was wrong.
    pub fn parse_within(text: &str, max: usize) -> Result<DataPattern, String> {
        let mut out = DataPattern::default();
        let mut s = text.trim();
        if s.is_empty() {
            return Err("empty pattern".into());
        }
        while !s.is_empty() {
            if let Some(rest) = s.strip_prefix('"') {
                let end = rest
                    .find('"')
                    .ok_or_else(|| format!("unterminated string in pattern '{text}'"))?;
                out.bytes.extend_from_slice(&rest.as_bytes()[..end]);
                s = &rest[end + 1..];
            } else if let Some(rest) = s.strip_prefix('\'') {
                let end = rest
                    .find('\'')
                    .ok_or_else(|| format!("unterminated file name in pattern '{text}'"))?;
                let name = &rest[..end];
                let room = (max + 1).saturating_sub(out.bytes.len()) as u64;
                let mut data = Vec::new();
                std::fs::File::open(name)
                    .and_then(|f| {
                        std::io::Read::read_to_end(&mut std::io::Read::take(f, room), &mut data)
                    })
                    .map_err(|e| format!("pattern file '{name}': {e}"))?;
                out.bytes.extend_from_slice(&data);
                s = &rest[end + 1..];
            } else if let Some(rest) = s.strip_prefix("%o") {
                out.offsets_at.push(out.bytes.len());
                out.bytes.extend_from_slice(&[0; 8]);
                s = rest;
            } else if s.len() > 2 && (s.starts_with("0x") || s.starts_with("0X")) {
                let digits = &s[2..];
                let mut n = digits
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(digits.len());
                // "0xff0x14": the 0 before the next prefix belongs to the next number.
                if n < digits.len() && n > 0 && matches!(digits.as_bytes()[n], b'x' | b'X') {
                    n -= 1;
                }
                if n == 0 {
                    return Err(format!("bad hex number in pattern '{text}'"));
                }
                let hex = &digits[..n];
                // An odd count reads the first digit alone, as fio does.
                let (first, rest) = if n % 2 == 1 {
                    hex.split_at(1)
                } else {
                    ("", hex)
                };
                if !first.is_empty() {
                    out.bytes.push(u8::from_str_radix(first, 16).unwrap_or(0));
                }
                for pair in rest.as_bytes().chunks(2) {
                    let p = std::str::from_utf8(pair).unwrap_or("0");
                    out.bytes.push(u8::from_str_radix(p, 16).unwrap_or(0));
                }
                s = &digits[n..];
            } else {
                // The first character may be multi-byte (hostile input): skip it whole.
                let first = s.chars().next().map_or(0, char::len_utf8);
                let mut stop = s[first..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(s.len(), |i| i + first);
                // "-100xab" is -10 then 0xab: a number ends where a hex prefix starts.
                if let Some(h) = s.to_ascii_lowercase().find("0x") {
                    if h > 0 && h < stop {
                        stop = h;
                    }
                }
                let num = &s[..stop];
                let v: i64 = num
                    .parse()
                    .map_err(|_| format!("bad number '{num}' in pattern '{text}'"))?;
                if v > i32::MAX as i64 || v < i32::MIN as i64 {
                    return Err(format!("number '{num}' out of range in pattern '{text}'"));
                }
                if v == 0 {
                    out.bytes.push(0);
                } else {
                    let mut u = v as i32 as u32;
                    while u != 0 {
                        out.bytes.push(u as u8);
                        u >>= 8;
                    }
                }
                s = &s[stop..];
            }
            if out.bytes.len() > max {
                return Err(format!("pattern '{text}' is longer than {max} bytes"));
            }
        }
        Ok(out)
    }

    /// True when the pattern has a `%o` format, so it differs per block.
    pub fn has_formats(&self) -> bool {
        !self.offsets_at.is_empty()
    }

    /// The pattern with `offset` pasted in place of every `%o`.
    pub fn with_offset(&self, offset: u64, into: &mut Vec<u8>) {
        into.clear();
        into.extend_from_slice(&self.bytes);
        let le = offset.to_le_bytes();
        for &at in &self.offsets_at {
            let n = (into.len() - at).min(8);
            into[at..at + n].copy_from_slice(&le[..n]);
        }
    }

    /// Repeats the pattern over `buf` from its start, `%o` set to `offset`.
    pub fn fill(&self, buf: &mut [u8], offset: u64) {
        let le = offset.to_le_bytes();
        let n = self.bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        for &at in &self.offsets_at {
            if at < n {
                let k = (n - at).min(8);
                buf[at..at + k].copy_from_slice(&le[..k]);
            }
        }
        spread(buf, self.bytes.len());
    }
}

/// Copies the first `unit` bytes of `buf` over the rest of it, doubling each time.
pub fn spread(buf: &mut [u8], unit: usize) {
    let mut have = unit;
    while have < buf.len() {
        let n = have.min(buf.len() - have);
        buf.copy_within(..n, have);
        have += n;
    }
}

/// Finds the first byte of `buf` that differs from `pat` repeated, starting `phase` bytes
/// into the pattern.
pub fn first_mismatch(pat: &[u8], phase: usize, buf: &[u8]) -> Option<usize> {
    let mut k = phase % pat.len();
    for (i, b) in buf.iter().enumerate() {
        if *b != pat[k] {
            return Some(i);
        }
        k += 1;
        if k == pat.len() {
            k = 0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<u8> {
        DataPattern::parse(s).unwrap().bytes
    }

    #[test]
    fn fio_examples() {
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("%o"), [0; 8]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        assert_eq!(
            p("-100xab\"1\"%o\"2\""),
            [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32]
        );
        assert_eq!(p("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0"), [0]);
        assert!(DataPattern::parse("\"abc").is_err());
        assert!(DataPattern::parse("zz").is_err());
    }

    #[test]
    fn fill_pastes_offsets_and_repeats() {
        let d = DataPattern::parse("0xaa%o").unwrap();
        let mut b = [0u8; 20];
        d.fill(&mut b, 0x0102);
        assert_eq!(&b[..9], &[0xaa, 2, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&b[9..18], &b[..9]);
        assert_eq!(first_mismatch(&b[..9], 0, &b), None);
        assert_eq!(first_mismatch(&b[..9], 1, &b), Some(0));
    }
}
