//! `verify=`: fio's checksum methods, their names, on-disk numbers and sizes. The sums
//! themselves are computed in `verify::checksum`.

/// Bytes in fio 3.33's verify header, before the checksum.
pub const HDR_LEN: usize = 40;

/// The verify header's layout, which fio 3.41 changed: a version byte out of the old
/// 16-bit `verify_type`, a 64-bit write number moved before `thread` (so two bytes of
/// padding before the crc), 48 bytes in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderLayout {
    /// fio 3.33 to 3.40: 40 bytes, a 16-bit `numberio`, no version.
    #[default]
    Plain,
    /// fio 3.41 and later: 48 bytes, version [`HEADER_VERSION`], a 64-bit `numberio`.
    Versioned,
}

/// The version byte of fio 3.41's headers (its high bit tells them from the older ones).
pub const HEADER_VERSION: u8 = 0x81;

impl HeaderLayout {
    /// The layout fio `release` writes and expects.
    pub fn of(release: super::FioRelease) -> HeaderLayout {
        if release >= super::FioRelease::V3_41 {
            HeaderLayout::Versioned
        } else {
            HeaderLayout::Plain
        }
    }

    /// Bytes of the header, before the checksum.
    pub const fn len(self) -> usize {
        match self {
            HeaderLayout::Plain => HDR_LEN,
            HeaderLayout::Versioned => 48,
        }
    }

    /// Bytes the header's own crc covers (everything before the crc).
    pub const fn crc_len(self) -> usize {
        self.len() - 4
    }
}

/// A checksum method, in fio's on-disk numbering (`verify_type` in the block header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Method {
    None = 0,
    Meta = 1,
    Md5 = 2,
    Crc64 = 3,
    Crc32 = 4,
    Crc32c = 5,
    Crc32cIntel = 6,
    Crc16 = 7,
    Crc7 = 8,
    Sha256 = 9,
    Sha512 = 10,
    Sha3_224 = 11,
    Sha3_256 = 12,
    Sha3_384 = 13,
    Sha3_512 = 14,
    Xxhash = 15,
    Sha1 = 16,
    /// `verify_pattern` without `verify=`: a header, then the pattern.
    Pattern = 17,
    /// `verify=pattern`: the pattern alone, no header.
    PatternNoHdr = 18,
    Null = 19,
}

/// Every method with its `verify=` spelling.
pub const METHODS: &[(&str, Method)] = &[
    ("0", Method::None),
    ("md5", Method::Md5),
    ("crc64", Method::Crc64),
    ("crc32", Method::Crc32),
    ("crc32c", Method::Crc32c),
    ("crc32c-intel", Method::Crc32cIntel),
    ("crc16", Method::Crc16),
    ("crc7", Method::Crc7),
    ("sha256", Method::Sha256),
    ("sha512", Method::Sha512),
    ("sha3-224", Method::Sha3_224),
    ("sha3-256", Method::Sha3_256),
    ("sha3-384", Method::Sha3_384),
    ("sha3-512", Method::Sha3_512),
    ("xxhash", Method::Xxhash),
    ("sha1", Method::Sha1),
    ("meta", Method::Meta),
    ("pattern", Method::PatternNoHdr),
    ("pattern_hdr", Method::Pattern),
    ("null", Method::Null),
];

/// The largest checksum area any method uses (sha512).
pub const MAX_SUM: usize = 128;

impl Method {
    /// The method for a `verify=` value.
    pub fn from_name(name: &str) -> Option<Method> {
        METHODS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// The method with on-disk number `n`.
    pub fn from_number(n: u16) -> Option<Method> {
        METHODS
            .iter()
            .map(|(_, m)| *m)
            .chain([Method::Pattern])
            .find(|m| *m as u16 == n)
    }

    /// The name fio prints for the method in failure messages.
    pub fn name(self) -> &'static str {
        match self {
            Method::Pattern | Method::PatternNoHdr => "pattern",
            Method::Crc32cIntel => "crc32c",
            m => METHODS
                .iter()
                .find(|(_, x)| *x == m)
                .map(|(n, _)| *n)
                .unwrap_or("none"),
        }
    }

    /// Bytes of checksum stored after the header.
    pub fn sum_len(self) -> usize {
        match self {
            Method::Md5 => 16,
            Method::Crc64 => 8,
            Method::Crc32 | Method::Crc32c | Method::Crc32cIntel | Method::Xxhash => 4,
            Method::Crc16 => 2,
            Method::Crc7 => 1,
            Method::Sha256 => 64,
            Method::Sha512 => 128,
            Method::Sha3_224 => 28,
            Method::Sha3_256 => 32,
            Method::Sha3_384 => 48,
            Method::Sha3_512 => 64,
            Method::Sha1 => 20,
            _ => 0,
        }
    }

    /// True when blocks carry fio's verify header.
    pub fn has_header(self) -> bool {
        !matches!(self, Method::None | Method::Null | Method::PatternNoHdr)
    }

    /// Header plus checksum bytes at the start of each interval, in `layout`.
    pub fn hdr_size(self, layout: HeaderLayout) -> usize {
        if self.has_header() {
            layout.len() + self.sum_len()
        } else {
            0
        }
    }

    /// True when blocks carry a data checksum (as opposed to header only, pattern or none).
    pub fn has_sum(self) -> bool {
        self.sum_len() > 0
    }

    /// The number of bytes of the stored sum that are fully determined by the data.
    /// fio's unfinished sha512 leaves part of its area undefined for short data.
    pub fn defined_len(self, data_len: usize) -> usize {
        match self {
            Method::Sha512 if data_len < 128 => data_len,
            m => m.sum_len(),
        }
    }
}
