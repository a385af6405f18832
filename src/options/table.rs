//! The one option table. Every option fio 3.33 knows is listed here once, with its aliases,
//! value kind, default, help, category, owning engine, and whether iobench implements it.
//! Parsing, `--cmdhelp`, `--enghelp`, `--showcmd` ordering and the option docs all read it.

/// The unit a bare number means for a time option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Usec,
    Msec,
    Sec,
}

/// How an option's value is written. The value parser (`value.rs`) checks each kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Free text (a path, a name).
    Str,
    /// One of a fixed set of words, each with its help text.
    Choice(&'static [(&'static str, &'static str)]),
    /// A whole number in `min..=max`, with `0x` hex, size suffixes and `$ncpus`-style math.
    Int { min: i64, max: i64 },
    /// A byte count with optional unit suffix (`4k`, `1Mi`, `2g`).
    Size,
    /// A byte count or a percentage (`size=20%`, `offset=80%`).
    SizeOrPercent,
    /// Byte counts per direction, comma separated: `bs=4k,8k,16k`, `bs=,8k`.
    SizeList,
    /// Ranges per direction: `bsrange=4k-512k`, `bsrange=1k-4k,2k-8k`.
    RangeList,
    /// A duration; a bare number is in the given unit.
    Time(TimeUnit),
    /// 0/1, true/false, yes/no, on/off; a bare flag means 1.
    Bool,
    /// A floating point number.
    Float,
    /// Colon-separated floats: `percentile_list=99:99.9`.
    FloatList,
    /// A syntax of its own, checked by the option's resolver (bssplit, cpus_allowed, …).
    Special,
    /// Accepted for compatibility and has no effect, as in fio.
    Deprecated,
}

/// Where an option sits in `--cmdhelp` and the docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Description,
    File,
    Io,
    Target,
    Rate,
    Latency,
    Stat,
    Log,
    Profile,
    Verify,
    Engine,
    Other,
}

/// Whether iobench implements an option. A `NotYet` option is an error when used, never
/// silently ignored: a benchmark that drops `direct=1` measures the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Yes,
    NotYet,
}

/// One option definition.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub default: Option<&'static str>,
    pub help: &'static str,
    pub category: Category,
    /// The engines this option belongs to; empty for a general option.
    pub engines: &'static [&'static str],
    /// Parse priority: higher applies first (fio sorts `kb_base` before sizes and `filename`
    /// after `directory`); `--showcmd` prints in this order, stable within a priority.
    pub prio: i8,
    pub support: Support,
}

/// Starts an option definition; the builder methods below fill in the rest.
pub const fn opt(name: &'static str, kind: Kind, help: &'static str) -> OptDef {
    OptDef {
        name,
        aliases: &[],
        kind,
        default: None,
        help,
        category: Category::Other,
        engines: &[],
        prio: 0,
        support: Support::Yes,
    }
}

impl OptDef {
    pub const fn alias(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub const fn def(mut self, default: &'static str) -> Self {
        self.default = Some(default);
        self
    }
    pub const fn cat(mut self, category: Category) -> Self {
        self.category = category;
        self
    }
    pub const fn engines(mut self, engines: &'static [&'static str]) -> Self {
        self.engines = engines;
        self
    }
    pub const fn prio(mut self, prio: i8) -> Self {
        self.prio = prio;
        self
    }
    pub const fn not_yet(mut self) -> Self {
        self.support = Support::NotYet;
        self
    }
    /// True when `name` is this option's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

use Category as C;
use Kind as K;

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

const INT_MAX: i64 = i64::MAX;

/// Every option. Keep sorted by category, then as fio lists them.
pub static OPTIONS: &[OptDef] = &[
    opt("description", K::Str, "Free text describing the job").cat(C::Description),
    opt(
        "name",
        K::Str,
        "Names the job; on the command line it also starts a new one",
    )
    .cat(C::Description),
    opt(
        "wait_for",
        K::Str,
        "Start only after the named job has finished",
    )
    .cat(C::Description),
    opt(
        "filename",
        K::Str,
        "The file or device to do I/O on; several are split by ':'",
    )
    .cat(C::File)
    .prio(-1),
    opt(
        "directory",
        K::Str,
        "The directory in which job files are made",
    )
    .cat(C::File),
    opt(
        "rw",
        K::Choice(RW_CHOICES),
        "The I/O pattern, with an optional ':N' modifier",
    )
    .alias(&["readwrite"])
    .def("read")
    .cat(C::Io),
    opt(
        "bs",
        K::SizeList,
        "Block size, per direction: read,write,trim",
    )
    .alias(&["blocksize"])
    .def("4096")
    .cat(C::Io),
    opt(
        "bsrange",
        K::RangeList,
        "Block size ranges, per direction: min-max",
    )
    .alias(&["blocksize_range"])
    .cat(C::Io),
    opt(
        "ioengine",
        K::Str,
        "How I/O is issued (psync, libaio, io_uring, …)",
    )
    .def("psync")
    .cat(C::Io),
    opt(
        "iodepth",
        K::Int { min: 1, max: 65536 },
        "How many I/Os to keep in flight",
    )
    .def("1")
    .cat(C::Io),
    opt(
        "size",
        K::SizeOrPercent,
        "How much to transfer per job, or a share of the file",
    )
    .cat(C::Io),
    opt(
        "filesize",
        K::SizeList,
        "The size of each file, or a range of sizes",
    )
    .cat(C::File),
    opt("offset", K::SizeOrPercent, "Where in the file I/O starts")
        .def("0")
        .cat(C::Io),
    opt("direct", K::Bool, "Bypass the page cache with O_DIRECT")
        .def("0")
        .cat(C::Io),
    opt(
        "buffered",
        K::Bool,
        "Go through the page cache (the opposite of direct)",
    )
    .def("1")
    .cat(C::Io),
    opt(
        "numjobs",
        K::Int {
            min: 1,
            max: INT_MAX,
        },
        "Run this many copies of the job",
    )
    .def("1")
    .cat(C::Io),
    opt(
        "runtime",
        K::Time(TimeUnit::Sec),
        "Stop the job after this long",
    )
    .alias(&["timeout"])
    .def("0")
    .cat(C::Io),
    opt(
        "time_based",
        K::Bool,
        "Keep running until runtime has passed, repeating the work",
    )
    .cat(C::Io),
    opt(
        "ramp_time",
        K::Time(TimeUnit::Sec),
        "Run this long before counting statistics",
    )
    .cat(C::Io),
    opt("group_reporting", K::Bool, "Report each group as one job").cat(C::Stat),
    opt(
        "stonewall",
        K::Bool,
        "Wait for earlier jobs to finish, and start a new group",
    )
    .alias(&["wait_for_previous"])
    .cat(C::Io),
    opt("new_group", K::Bool, "Start a new reporting group").cat(C::Io),
    opt(
        "norandommap",
        K::Bool,
        "Let random I/O hit blocks more than once per pass",
    )
    .cat(C::Io),
    opt(
        "kb_base",
        K::Choice(&[("1024", "k means 1024"), ("1000", "k means 1000")]),
        "Whether k means 1024 or 1000 in sizes",
    )
    .def("1024")
    .cat(C::Other)
    .prio(1),
    opt(
        "verify",
        K::Choice(&[
            ("0", "no verification"),
            ("null", "no verification"),
            ("md5", "md5 checksum"),
            ("crc32c", "crc32c checksum"),
        ]),
        "Check written data with this method",
    )
    .def("0")
    .cat(C::Verify),
    opt(
        "iodepth_batch_submit",
        K::Int {
            min: 0,
            max: INT_MAX,
        },
        "Submit this many I/Os at once",
    )
    .alias(&["iodepth_batch"])
    .def("1")
    .cat(C::Io),
    opt(
        "iodepth_batch_complete_min",
        K::Int {
            min: 0,
            max: INT_MAX,
        },
        "Reap at least this many completions at once",
    )
    .alias(&["iodepth_batch_complete"])
    .def("1")
    .cat(C::Io),
    opt(
        "iodepth_batch_complete_max",
        K::Int {
            min: 0,
            max: INT_MAX,
        },
        "Reap at most this many completions at once",
    )
    .cat(C::Io),
];

/// The definition answering to `name` (its name or an alias).
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    OPTIONS.iter().find(|o| o.answers_to(name))
}

/// The known option name closest to `name`, for "did you mean" hints.
pub fn nearest(name: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= 3.max(n.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}
