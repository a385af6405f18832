//! The text of fio's per-I/O log lines (`time, value, ddir, bs[, offset], prio`), built
//! fast. A job with `write_lat_log` formats two lines for every I/O, millions a second, so
//! the line costs about as much as the I/O itself unless it is cheap: the time and the
//! `ddir, bs` part repeat from one line to the next and are kept formatted, each line is
//! put together in a stack buffer with fixed-size copies and appended in one copy, with no
//! `core::fmt` and no per-field `memcpy` call.

use super::logs::Sample;

/// Room for the longest line: six 20-digit numbers (the issue time the sixth), their
/// separators and the longest tail, with the fixed-size copies' slack.
const MAX_LINE: usize = 160;

/// Two-digit groups, "00" to "99", for writing two digits per division.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `v` in decimal at the start of `out` (which must hold 20 bytes) and returns the
/// number of digits written. The digits are made right to left in a scratch buffer twice
/// their greatest length, so that moving them is a copy of constant size (20 bytes, of
/// which the bytes past the digits are overwritten by what the line puts next).
#[inline]
fn put_u64(out: &mut [u8], mut v: u64) -> usize {
    let mut scratch = [0u8; 40];
    let mut i = 20;
    while v >= 100 {
        let p = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        scratch[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    }
    if v >= 10 {
        let p = v as usize * 2;
        i -= 2;
        scratch[i..i + 2].copy_from_slice(&PAIRS[p..p + 2]);
    } else {
        i -= 1;
        scratch[i] = b'0' + v as u8;
    }
    out[..20].copy_from_slice(&scratch[i..i + 20]);
    20 - i
}

/// A piece of a line kept formatted, padded to a fixed size so that it is copied with
/// constant-size moves.
#[derive(Clone, Copy)]
struct Piece<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Piece<N> {
    const EMPTY: Self = Piece {
        bytes: [0; N],
        len: 0,
    };

    /// Copies the piece to the start of `out` (N bytes of room) and returns its length.
    #[inline]
    fn put(&self, out: &mut [u8]) -> usize {
        out[..N].copy_from_slice(&self.bytes);
        self.len
    }
}

/// Writes samples as fio's log lines, keeping the repeating parts formatted.
pub struct LineWriter {
    /// Added to every sample's time (`log_unix_epoch`).
    base: u64,
    offset: bool,
    /// `, prio\n`: fio prints `0` without `log_prio`, the 16-bit priority with it.
    tail: Piece<16>,
    /// The formatted `time, ` of the last line, and its time.
    time: Piece<24>,
    last_time: Option<u64>,
    /// The formatted `, ddir, bs` of the last line, and its (ddir, bs).
    middle: Piece<32>,
    last_middle: Option<(u8, u64)>,
    /// `log_issue_time`: an `, issue` column after prio.
    issue: bool,
}

impl LineWriter {
    /// A writer for lines with (`offset`) or without the offset column, and fio's prio
    /// column as `log_prio` (`prio`) prints it.
    pub fn new(base: u64, offset: bool, prio: bool) -> Self {
        let mut tail = Piece::EMPTY;
        let text: &[u8] = if prio { b", 0x0000\n" } else { b", 0\n" };
        tail.bytes[..text.len()].copy_from_slice(text);
        tail.len = text.len();
        LineWriter {
            base,
            offset,
            tail,
            time: Piece::EMPTY,
            last_time: None,
            middle: Piece::EMPTY,
            last_middle: None,
            issue: false,
        }
    }

    /// Adds fio 3.38's last column, the issue time (`log_issue_time`), when `on`.
    pub fn with_issue_time(mut self, on: bool) -> Self {
        self.issue = on;
        if on {
            // The prio part then ends without its newline.
            self.tail.len -= 1;
        }
        self
    }

    /// Appends one line per sample to `out`.
    pub fn write(&mut self, out: &mut Vec<u8>, samples: &[Sample]) {
        // Lines are about 25 bytes: one reservation for the usual case.
        out.reserve(samples.len() * 32);
        let mut line = [0u8; MAX_LINE];
        for s in samples {
            let n = self.line(&mut line, s);
            out.extend_from_slice(&line[..n]);
        }
    }

    /// Writes one line at the start of `out` (MAX_LINE bytes) and returns its length.
    #[inline]
    fn line(&mut self, out: &mut [u8], s: &Sample) -> usize {
        let time = s.time_ms + self.base;
        if self.last_time != Some(time) {
            self.last_time = Some(time);
            let n = put_u64(&mut self.time.bytes, time);
            self.time.bytes[n..n + 2].copy_from_slice(b", ");
            self.time.len = n + 2;
        }
        if self.last_middle != Some((s.ddir, s.bs)) {
            self.last_middle = Some((s.ddir, s.bs));
            let m = &mut self.middle.bytes;
            m[..2].copy_from_slice(b", ");
            let mut n = 2 + put_u64(&mut m[2..], u64::from(s.ddir));
            m[n..n + 2].copy_from_slice(b", ");
            n += 2;
            n += put_u64(&mut m[n..], s.bs);
            self.middle.len = n;
        }
        let mut at = self.time.put(out);
        at += put_u64(&mut out[at..], s.value);
        at += self.middle.put(&mut out[at..]);
        if self.offset {
            out[at..at + 2].copy_from_slice(b", ");
            at += 2;
            at += put_u64(&mut out[at..], s.offset);
        }
        at += self.tail.put(&mut out[at..]);
        if self.issue {
            out[at..at + 2].copy_from_slice(b", ");
            at += 2;
            at += put_u64(&mut out[at..], s.issue_ns);
            out[at] = b'\n';
            at += 1;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(w: &mut LineWriter, samples: &[Sample]) -> String {
        let mut out = b"kept ".to_vec();
        w.write(&mut out, samples);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn digits_match_display() {
        for v in [
            0u64,
            7,
            9,
            10,
            99,
            100,
            101,
            4096,
            999_999,
            1 << 40,
            u64::MAX,
        ] {
            let mut b = [0u8; 20];
            let n = put_u64(&mut b, v);
            assert_eq!(std::str::from_utf8(&b[..n]).unwrap(), v.to_string());
        }
    }

    #[test]
    fn lines_are_fios_and_cached_parts_follow_changes() {
        let s = |time_ms, value, ddir, bs, offset| Sample {
            time_ms,
            value,
            ddir,
            bs,
            offset,
            issue_ns: 0,
        };
        let samples = [
            s(3, 1000, 0, 4096, 8192),
            s(3, 7, 0, 4096, 0),
            s(10, 123456, 1, 4096, 4096),
            s(10, 5, 1, 1048576, u64::MAX),
        ];
        let mut w = LineWriter::new(0, true, false);
        assert_eq!(
            text(&mut w, &samples),
            "kept 3, 1000, 0, 4096, 8192, 0\n3, 7, 0, 4096, 0, 0\n\
             10, 123456, 1, 4096, 4096, 0\n10, 5, 1, 1048576, 18446744073709551615, 0\n"
        );
        let mut w = LineWriter::new(1_700_000_000_000, false, true);
        assert_eq!(
            text(&mut w, &samples[..2]),
            "kept 1700000000003, 1000, 0, 4096, 0x0000\n1700000000003, 7, 0, 4096, 0x0000\n"
        );
        let mut w = LineWriter::new(0, true, false).with_issue_time(true);
        let issued = Sample {
            issue_ns: 20170,
            ..s(0, 8993, 0, 4096, 12288)
        };
        assert_eq!(
            text(&mut w, &[issued, s(0, 70, 0, 4096, 0)]),
            "kept 0, 8993, 0, 4096, 12288, 0, 20170\n0, 70, 0, 4096, 0, 0, 0\n"
        );
        let widest = s(u64::MAX - 1, u64::MAX, 255, u64::MAX, u64::MAX);
        let mut w = LineWriter::new(1, true, true);
        let m = u64::MAX;
        assert_eq!(
            text(&mut w, &[widest]),
            format!("kept {m}, {m}, 255, {m}, {m}, 0x0000\n")
        );
    }
}
