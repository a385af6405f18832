//! The general option rows that the engines, or the reader itself, read too (`bs` for the
//! http engine's size classes, `kb_base` and `zonesize` for what sizes mean, ...). They are
//! declared here, below both, because the engines may not reach up to the catalog; the
//! catalog (`options::table`) places them in its one table in fio's order, beside the rest
//! of the general rows, and re-exports them. Each row is one named constant, and its
//! readers take the row itself (`r.size(&ZONESIZE)`), so a misspelt option cannot compile.

use super::{opt, Category as C, Kind as K, OptDef, TimeUnit};

const INT_MAX: i64 = i64::MAX;

const RW_CHOICES: &[(&str, &str)] = &[
    ("read", "sequential reads"),
    ("write", "sequential writes"),
    ("trim", "sequential trims"),
    ("randread", "random reads"),
    ("randwrite", "random writes"),
    ("randtrim", "random trims"),
    ("rw", "a mix of sequential reads and writes"),
    ("readwrite", "a mix of sequential reads and writes"),
    ("randrw", "a mix of random reads and writes"),
    (
        "trimwrite",
        "sequential trims, each followed by a write of the same block",
    ),
    (
        "randtrimwrite",
        "random trims, each followed by a write of the same block",
    ),
];

const VERIFY_CHOICES: &[(&str, &str)] = &[
    ("0", "no verification"),
    ("md5", "MD5 digest"),
    ("crc64", "CRC-64"),
    ("crc32", "CRC-32"),
    ("crc32c-intel", "CRC-32C (hardware when present)"),
    ("crc32c", "CRC-32C"),
    ("crc16", "CRC-16"),
    ("crc7", "CRC-7"),
    ("sha1", "SHA-1 digest"),
    ("sha256", "SHA-256 digest"),
    ("sha512", "SHA-512 digest"),
    ("sha3-224", "SHA3-224 digest"),
    ("sha3-256", "SHA3-256 digest"),
    ("sha3-384", "SHA3-384 digest"),
    ("sha3-512", "SHA3-512 digest"),
    ("xxhash", "xxHash"),
    ("meta", "header data only"),
    ("pattern", "the verify_pattern bytes"),
    (
        "pattern_hdr",
        "the verify_pattern bytes under a verify header",
    ),
    ("null", "no verification"),
];

const KB_BASE_CHOICES: &[(&str, &str)] = &[("1024", "k means 1024"), ("1000", "k means 1000")];

pub const FILENAME: OptDef = opt(
    "filename",
    K::Str,
    "The file or device to do I/O on; several are split by ':'",
)
.cat(C::File)
.prio(-1);

pub const DIRECTORY: OptDef = opt(
    "directory",
    K::Str,
    "The directory in which job files are made",
)
.cat(C::File);

pub const RW: OptDef = opt(
    "rw",
    K::Choice(RW_CHOICES),
    "The I/O pattern, with an optional ':N' modifier",
)
.alias(&["readwrite"])
.def("read")
.cat(C::Io);

pub const SIZE: OptDef = opt(
    "size",
    K::SizeOrPercent,
    "How much to transfer per job, or a share of the file",
)
.cat(C::Io);

pub const FILESIZE: OptDef = opt(
    "filesize",
    K::RangeList,
    "The size of each file, or a range of sizes",
)
.cat(C::File)
.range(1, INT_MAX);

pub const OFFSET: OptDef = opt("offset", K::SizeOrPercent, "Where in the file I/O starts")
    .alias(&["fileoffset"])
    .def("0")
    .cat(C::Io);

pub const BS: OptDef = opt(
    "bs",
    K::SizeList,
    "Block size, per direction: read,write,trim",
)
.alias(&["blocksize"])
.def("4096")
.cat(C::Io)
.parent("rw")
.range(1, INT_MAX);

pub const BSRANGE: OptDef = opt(
    "bsrange",
    K::RangeList,
    "Block size ranges, per direction: min-max",
)
.alias(&["blocksize_range"])
.cat(C::Io)
.parent("rw")
.range(1, INT_MAX);

pub const BSSPLIT: OptDef = opt(
    "bssplit",
    K::Special,
    "Weighted mix of block sizes, e.g. 4k/50:64k/50",
)
.cat(C::Io)
.parent("rw");

pub const RANDSEED: OptDef = opt(
    "randseed",
    K::Size,
    "The seed for the random number generators",
)
.def("0x89")
.cat(C::Io)
.parent("rw");

pub const IO_TIMEOUT: OptDef = opt(
    "io_timeout",
    K::Time(TimeUnit::Sec),
    "iobench extension, not in fio: end the job with ETIMEDOUT when an I/O is \
     outstanding this long, keeping what completed (0: never)",
)
.def("0")
.cat(C::Other)
.iobench_only();

pub const VERIFY: OptDef = opt(
    "verify",
    K::Choice(VERIFY_CHOICES),
    "Check written data with this method",
)
.def("0")
.cat(C::Verify)
.later(&[("pattern_hdr", super::FioRelease::V3_40)]);

pub const ZONESIZE: OptDef = opt(
    "zonesize",
    K::Size,
    "Bytes of I/O done in each zone before moving on",
)
.def("0")
.cat(C::Target);

pub const PRIO: OptDef = opt(
    "prio",
    K::Int { min: 0, max: 7 },
    "The job's I/O priority level within its class (0 is highest)",
)
.cat(C::Other)
.range(0, 7);

pub const PRIOCLASS: OptDef = opt(
    "prioclass",
    K::Int { min: 0, max: 3 },
    "The job's I/O priority class (realtime, best effort, idle)",
)
.cat(C::Other)
.range(0, 3);

/// The largest I/O priority hint (the kernel's IOPRIO_HINT_BITS, 10).
pub const MAX_PRIO_HINT: i64 = 1023;

pub const PRIOHINT: OptDef = opt(
    "priohint",
    K::Int {
        min: 0,
        max: MAX_PRIO_HINT,
    },
    "The I/O priority hint of the job's I/O",
)
.cat(C::Other)
.range(0, MAX_PRIO_HINT)
.since(super::FioRelease::V3_36);

pub const KB_BASE: OptDef = opt(
    "kb_base",
    K::Choice(KB_BASE_CHOICES),
    "Whether k means 1024 or 1000 in sizes",
)
.def("1024")
.cat(C::Other)
.prio(1);
