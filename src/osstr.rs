//! Bytes that are not UTF-8 (in arguments, job files, file names) carried losslessly
//! through iobench's `String`-based option handling.
//!
//! fio takes its arguments and job files as raw bytes, so a file name in Latin-1 works.
//! iobench keeps options as `String`s; rather than refuse (or panic, as `std::env::args`
//! does), each byte that is not part of valid UTF-8 becomes one character of a private-use
//! range (U+10FF00 + byte), and [`to_path`] turns those back into the original bytes
//! wherever a name reaches the file system. Valid UTF-8 is never changed.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// The first character of the escape range: byte `b` is `ESCAPE_BASE + b`.
const ESCAPE_BASE: u32 = 0x10_FF00;

/// Decodes bytes as UTF-8, escaping each byte that is not valid UTF-8 (see the module doc).
pub fn decode_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            out.push(escape(b));
        }
    }
    out
}

/// One escaped byte.
fn escape(b: u8) -> char {
    // Every value in ESCAPE_BASE..=ESCAPE_BASE+255 is a valid scalar value (plane 16).
    char::from_u32(ESCAPE_BASE + b as u32).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// An argument as iobench's options take it.
pub fn from_os(arg: OsString) -> String {
    match arg.into_string() {
        Ok(s) => s,
        Err(os) => decode_bytes(&os.into_vec()),
    }
}

/// The bytes a decoded string stands for: escaped bytes back to themselves.
pub fn to_bytes(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let v = c as u32;
        if (ESCAPE_BASE..=ESCAPE_BASE + 0xFF).contains(&v) {
            out.push((v - ESCAPE_BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// The file system path a decoded name stands for.
pub fn to_path(s: &str) -> PathBuf {
    if !s.chars().any(|c| c as u32 >= ESCAPE_BASE) {
        return PathBuf::from(s);
    }
    PathBuf::from(OsString::from_vec(to_bytes(s)))
}

/// Text from outside (a server's answer, a name read from a history file) made safe for
/// a terminal: every control character (C0, DEL, C1 such as U+009B, the one-character
/// CSI) is written as `\xNN` or `\u{NNNN}`, so no escape sequence reaches the terminal
/// and a line stays one line; the text is otherwise unchanged.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !c.is_control() {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`printable`] for a text of lines: each line escaped, the newlines kept.
pub fn printable_lines(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return std::borrow::Cow::Borrowed(s);
    }
    let lines: Vec<_> = s.split('\n').map(printable).collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// Undoes the kernel's octal escapes (`\040` for a space) in /proc/self/mountinfo and
/// /proc/swaps; shared by the mount checks of `context` and `run::claim`.
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_control_characters() {
        assert_eq!(printable("plain text"), "plain text");
        assert_eq!(
            printable("a\x1b]0;pwned\x07b\u{9b}31mc\nd"),
            "a\\x1b]0;pwned\\x07b\\x9b31mc\\x0ad"
        );
        assert_eq!(printable_lines("a\x1b[2J\nb\n"), "a\\x1b[2J\nb\n");
    }
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn round_trips_invalid_bytes() {
        let raw = b"job-\xe9t\xe9\xff.dat".to_vec();
        let s = from_os(OsString::from_vec(raw.clone()));
        assert_eq!(to_bytes(&s), raw);
        assert_eq!(to_path(&s).as_os_str().as_bytes(), &raw[..]);
    }

    #[test]
    fn leaves_utf8_alone() {
        let s = from_os(OsString::from("café"));
        assert_eq!(s, "café");
        assert_eq!(to_path(&s), PathBuf::from("café"));
    }
}
