//! One option definition: its names, how its value is written, its default and help.
//! The engines declare their rows with [`opt`]; the catalog (`options::table`) assembles
//! the general rows and theirs into the one table.

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
    /// One of a fixed set of words, each with its help text. A word may carry a `:suffix`
    /// (`rw=randread:8`, `random_distribution=zipf:1.2`); a comma separates several words.
    Choice(&'static [(&'static str, &'static str)]),
    /// A whole number in `min..=max`, with `0x` hex, size suffixes and `$ncpus`-style math.
    Int { min: i64, max: i64 },
    /// Whole numbers per direction, comma separated: `rate_iops=500,200`.
    IntList { min: i64, max: i64 },
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

impl Category {
    /// Every category, in the order the docs list them.
    pub const ALL: [Category; 12] = [
        Category::Description,
        Category::File,
        Category::Io,
        Category::Target,
        Category::Rate,
        Category::Latency,
        Category::Verify,
        Category::Stat,
        Category::Log,
        Category::Profile,
        Category::Engine,
        Category::Other,
    ];

    /// A heading for the docs.
    pub fn title(self) -> &'static str {
        match self {
            Category::Description => "Job description",
            Category::File => "Files",
            Category::Io => "I/O",
            Category::Target => "Zones",
            Category::Rate => "Rate limits",
            Category::Latency => "Latency targets",
            Category::Stat => "Statistics",
            Category::Log => "Logs",
            Category::Profile => "Profiles",
            Category::Verify => "Verification",
            Category::Engine => "Engine options",
            Category::Other => "Process and general",
        }
    }
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
    /// The option this one refines, as fio nests them in `--cmdhelp` (e.g. `bs` under `rw`).
    pub parent: Option<&'static str>,
    /// The bounds `--cmdhelp=NAME` shows, when fio shows any (`i64::MAX` means unbounded).
    pub range: Option<(i64, i64)>,
    /// For a supported option whose values are only partly implemented, the words that are
    /// (`verify=0` but not `verify=md5`); any other value is refused as not supported yet.
    /// `ioengine` is gated by the engines' declarations instead.
    pub only: Option<&'static [&'static str]>,
    /// An iobench extension fio 3.33 does not have (`io_stall_warn`, `io_timeout`): left
    /// out of `--cmdhelp`'s overview, which stays fio's, and marked in the docs.
    pub iobench_only: bool,
    /// The fio release that added the option (3.33 for everything 3.33 has): a job in an
    /// older dialect (`--fio-compat`) refuses it by name with this release.
    pub since: super::FioRelease,
    /// A credential (a password, a secret key, a token): its value is replaced by
    /// `REDACTED` (`<redacted>`) in everything iobench writes or prints (reports, exports, the
    /// history, `--showcmd`, logs), so that one shows it was given but not what it is.
    pub secret: bool,
    /// Names and values added after the option itself, each with the release that added it:
    /// an alias (`ss_interval`), a choice word (`fadvise_hint=noreuse`), or, for a renamed
    /// option, its old name with the older release (`log_max_value`, 3.33).
    pub later: &'static [(&'static str, super::FioRelease)],
    /// For a `NotYet` option, why iobench cannot run it here (told with the refusal); for
    /// an option with `only`, why the other values are refused.
    pub why_not: Option<&'static str>,
}

/// What a secret option's value is shown as (the same mark everywhere, so a reader of a
/// report can tell that a credential was given).
pub const REDACTED: &str = "<redacted>";

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
        parent: None,
        range: None,
        only: None,
        iobench_only: false,
        since: super::FioRelease::OLDEST,
        secret: false,
        later: &[],
        why_not: None,
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
    pub const fn parent(mut self, parent: &'static str) -> Self {
        self.parent = Some(parent);
        self
    }
    pub const fn range(mut self, min: i64, max: i64) -> Self {
        self.range = Some((min, max));
        self
    }
    pub const fn iobench_only(mut self) -> Self {
        self.iobench_only = true;
        self
    }
    /// Marks an option added after fio 3.33, by the release that added it.
    pub const fn since(mut self, release: super::FioRelease) -> Self {
        self.since = release;
        self
    }
    /// Names or values of this option that fio added later than the option (see `later`).
    pub const fn later(mut self, later: &'static [(&'static str, super::FioRelease)]) -> Self {
        self.later = later;
        self
    }
    /// Refused as not supported yet, for the reason given (`needs an NVMe device`).
    pub const fn not_yet_because(mut self, why: &'static str) -> Self {
        self.support = Support::NotYet;
        self.why_not = Some(why);
        self
    }
    /// The release that added option `name` (this option's name or an alias) with `value`:
    /// the newest of the option's own release and those of the name and value word used.
    /// A job in an older dialect refuses it with this release.
    pub fn added_in(&self, name: &str, value: Option<&str>) -> super::FioRelease {
        let word = value.map(|v| v.split([':', ',']).next().unwrap_or(v).trim());
        let own = |w: &str| self.later.iter().find(|(n, _)| *n == w).map(|(_, r)| *r);
        let mut release = match own(name) {
            Some(r) => r,
            None => self.since,
        };
        if let Some(r) = word.and_then(own) {
            release = release.max(r);
        }
        release
    }
    pub const fn only(mut self, words: &'static [&'static str]) -> Self {
        self.only = Some(words);
        self
    }
    /// Why the values `only` leaves out are refused (an option iobench runs, with values
    /// it does not): the refusal of such a value says it.
    pub const fn others_because(mut self, why: &'static str) -> Self {
        self.why_not = Some(why);
        self
    }
    /// Marks a credential (see [`OptDef::secret`]).
    pub const fn secret(mut self) -> Self {
        self.secret = true;
        self
    }
    /// The value as it may be written out: `REDACTED` for a secret option.
    pub fn shown<'a>(&self, value: &'a str) -> &'a str {
        if self.secret {
            REDACTED
        } else {
            value
        }
    }
    /// True when `name` is this option's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
    /// True for an option that belongs to one or more engines.
    pub fn is_engine_option(&self) -> bool {
        !self.engines.is_empty()
    }
}
