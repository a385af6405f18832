//! The one option table. Every option fio 3.33 knows is listed here once, with its aliases,
//! value kind, default, help, category, owning engines, and whether iobench implements it.
//! Parsing, `--cmdhelp`, `--enghelp`, `--showcmd` ordering and the option docs all read it.
//!
//! The facts (names, aliases, kinds, defaults, ranges, choice words, parents, priorities,
//! engines) were taken from fio 3.33 itself; `tests/cli/option_table.rs` checks them against the
//! installed fio. The help words are iobench's own.

use crate::defs::{opt, Category, FioRelease as F, Kind, OptDef, TimeUnit};

/// The general rows declared below the engines (see `defs::rows`), placed here in fio's order.
pub use crate::defs::rows::{
    BS, BSRANGE, BSSPLIT, DIRECTORY, FILENAME, FILESIZE, IO_TIMEOUT, KB_BASE, OFFSET, PRIO,
    PRIOCLASS, PRIOHINT, RANDSEED, RW, SIZE, VERIFY, ZONESIZE,
};

/// Whether a value is implemented, which for `ioengine` the engines' declarations decide.
impl OptDef {
    /// True when `value` is implemented for this (supported) option: its leading word (before
    /// any `:` or `,`) is in `only`, or for `ioengine`, names an implemented engine.
    pub fn value_supported(&self, value: &str) -> bool {
        let word = value.split([':', ',']).next().unwrap_or(value).trim();
        if self.name == "ioengine" {
            return engine(word).is_some_and(|e| e.refused.is_none());
        }
        match self.only {
            None => true,
            Some(words) => words.iter().any(|w| w.eq_ignore_ascii_case(word)),
        }
    }
}

/// The engine named `name` (implemented or refused), from the engines' own declarations.
pub fn engine(name: &str) -> Option<&'static crate::engine::spec::Spec> {
    crate::engine::registry::spec(name)
}

use Category as C;
use Kind as K;

const LOCKFILE_CHOICES: &[(&str, &str)] = &[
    ("none", "no locking"),
    ("exclusive", "one I/O at a time"),
    ("readwrite", "many readers or one writer"),
];

const RW_SEQUENCER_CHOICES: &[(&str, &str)] = &[
    ("sequential", "skip ahead N blocks"),
    ("identical", "repeat the same offset N times"),
];

/// `ioengine`'s choices: the engines fio lists there, from their declarations.
const IOENGINE_CHOICES: &[(&str, &str)] = &crate::engine::registry::choices::<N_ENGINE_CHOICES>();
const N_ENGINE_CHOICES: usize = crate::engine::registry::choice_count();

const IO_SUBMIT_MODE_CHOICES: &[(&str, &str)] = &[
    ("inline", "the job submits its own I/O"),
    ("offload", "helper threads submit I/O"),
];

const RANDOM_GENERATOR_CHOICES: &[(&str, &str)] = &[
    ("tausworthe", "a fast, strong generator"),
    (
        "lfsr",
        "a linear feedback shift register; visits each block once",
    ),
    ("tausworthe64", "a 64-bit variant for huge files"),
];

const RANDOM_DISTRIBUTION_CHOICES: &[(&str, &str)] = &[
    ("random", "even spread"),
    ("zipf", "Zipf skew (zipf:theta)"),
    ("pareto", "Pareto skew (pareto:h)"),
    ("normal", "bell curve (normal:dev)"),
    ("zoned", "weighted zones by percentage"),
    ("zoned_abs", "weighted zones by absolute size"),
];

const FILE_SERVICE_TYPE_CHOICES: &[(&str, &str)] = &[
    ("random", "a random file"),
    ("zipf", "files with Zipf skew"),
    ("pareto", "files with Pareto skew"),
    ("normal", "files on a bell curve"),
    ("gauss", "same as normal"),
    ("roundrobin", "each file in turn"),
    ("sequential", "one file, then the next"),
];

const FALLOCATE_CHOICES: &[(&str, &str)] = &[
    ("none", "no preallocation"),
    ("native", "the native call if there is one"),
    ("posix", "posix_fallocate"),
    ("keep", "fallocate keeping the file size"),
    ("truncate", "ftruncate to size"),
    ("0", "same as none"),
    ("1", "same as posix"),
];

const FADVISE_HINT_CHOICES: &[(&str, &str)] = &[
    ("0", "no hint"),
    ("1", "hint from the rw pattern"),
    ("random", "random access"),
    ("sequential", "sequential access"),
    ("noreuse", "the data will be accessed only once"),
];

const SYNC_FILE_RANGE_CHOICES: &[(&str, &str)] = &[
    ("wait_before", "wait for earlier writeback first"),
    ("write", "start writeback"),
    ("wait_after", "wait for writeback to finish"),
];

const CLOCKSOURCE_CHOICES: &[(&str, &str)] = &[
    (
        "gettimeofday",
        "gettimeofday(2): microsecond wall-clock time",
    ),
    (
        "clock_gettime",
        "clock_gettime(2) on CLOCK_MONOTONIC, through the vDSO",
    ),
    ("cpu", "the CPU's time-stamp counter, calibrated at start"),
];

const MEM_CHOICES: &[(&str, &str)] = &[
    ("malloc", "heap memory"),
    ("shm", "System V shared memory"),
    ("shmhuge", "shared memory in huge pages"),
    ("mmap", "anonymous or file mapping"),
    ("mmapshared", "shared anonymous mapping"),
    ("mmaphuge", "mapping from a hugetlbfs file"),
];

const ZONEMODE_CHOICES: &[(&str, &str)] = &[
    ("none", "no zones"),
    ("strided", "zones spaced by zoneskip"),
    ("zbd", "zones with write pointers (emulated on files)"),
];

const THINKTIME_BLOCKS_TYPE_CHOICES: &[(&str, &str)] = &[
    ("complete", "count completed I/Os"),
    ("issue", "count issued I/Os"),
];

const RATE_PROCESS_CHOICES: &[(&str, &str)] =
    &[("linear", "evenly spaced"), ("poisson", "Poisson arrivals")];

const ARRIVAL_CHOICES: &[(&str, &str)] = &[
    (
        "closed",
        "fio's closed loop: an I/O starts when the last one lets it",
    ),
    ("fixed", "open loop: evenly spaced scheduled starts"),
    ("poisson", "open loop: Poisson scheduled starts"),
];

const SYNC_CHOICES: &[(&str, &str)] = &[
    ("none", "normal writes"),
    ("0", "same as none"),
    ("sync", "O_SYNC"),
    ("1", "same as sync"),
    ("dsync", "O_DSYNC"),
];

const WRITE_HINT_CHOICES: &[(&str, &str)] = &[
    ("none", "no hint"),
    ("short", "short lived"),
    ("medium", "medium lived"),
    ("long", "long lived"),
    ("extreme", "very long lived"),
];

const CPUS_ALLOWED_POLICY_CHOICES: &[(&str, &str)] = &[
    ("shared", "all clones use the whole set"),
    ("split", "each clone gets its own CPU"),
];

const EXIT_WHAT_CHOICES: &[(&str, &str)] = &[
    ("group", "jobs in the same group"),
    ("stonewall", "jobs up to the next stonewall"),
    ("all", "every job"),
];

const DEDUPE_MODE_CHOICES: &[(&str, &str)] = &[
    ("repeat", "repeat an earlier buffer"),
    ("working_set", "draw from a working set"),
];

const UNIFIED_RW_REPORTING_CHOICES: &[(&str, &str)] = &[
    ("none", "per direction"),
    ("mixed", "all directions as one"),
    ("both", "per direction and as one"),
    ("0", "same as none"),
    ("1", "same as mixed"),
    ("2", "same as both"),
];

const CONTINUE_ON_ERROR_CHOICES: &[(&str, &str)] = &[
    ("none", "stop on any error"),
    ("read", "read errors"),
    ("write", "write errors"),
    ("io", "any I/O error"),
    ("verify", "verify errors"),
    ("all", "all errors"),
    ("0", "same as none"),
    ("1", "same as all"),
];

const PROFILE_CHOICES: &[(&str, &str)] = &[
    ("tiobench", "the tiotest-like profile"),
    ("act", "the Aerospike certification profile"),
];

const UNIT_BASE_CHOICES: &[(&str, &str)] =
    &[("0", "pick automatically"), ("8", "bytes"), ("1", "bits")];

const STEADYSTATE_CHOICES: &[(&str, &str)] = &[
    ("iops", "IOPS within a limit of the mean"),
    ("iops_slope", "slope of IOPS under a limit"),
    ("bw", "bandwidth within a limit of the mean"),
    ("bw_slope", "slope of bandwidth under a limit"),
    ("lat", "mean completion latency within a limit of the mean"),
    (
        "lat_slope",
        "slope of mean completion latency under a limit",
    ),
];

const INT_MAX: i64 = i64::MAX;

const DATAPLACEMENT_CHOICES: &[(&str, &str)] = &[
    ("none", "no data placement"),
    ("fdp", "NVMe Flexible Data Placement"),
    ("streams", "NVMe streams"),
];

const PLID_SELECT_CHOICES: &[(&str, &str)] = &[
    ("random", "a placement id at random"),
    ("roundrobin", "each placement id in turn"),
    ("scheme", "the id dp_scheme maps the offset to"),
];

const FILETYPE_CHOICES: &[(&str, &str)] = &[
    ("none", "look at each file"),
    ("file", "regular files"),
    ("block", "block devices"),
    ("char", "character devices"),
];

const LOG_WINDOW_VALUE_CHOICES: &[(&str, &str)] = &[
    ("avg", "the average of the window"),
    ("max", "the largest sample of the window"),
    ("both", "the average and the largest sample"),
    ("0", "same as avg"),
    ("1", "same as max"),
];

/// Every option: the general ones below in fio's order (which `--cmdhelp` follows), then
/// each engine's own options (declared in its file under `engine/`), each once.
pub static OPTIONS: &[OptDef] = &ALL_OPTIONS;
static ALL_OPTIONS: [OptDef; N_OPTIONS] =
    crate::engine::registry::with_engine_options::<N_OPTIONS>(GENERAL);
const N_OPTIONS: usize = crate::engine::registry::option_count(GENERAL);

/// The options that belong to no engine, in fio's order. Keep one builder chain per option.
const GENERAL: &[OptDef] = &[
    DESCRIPTION,
    NAME,
    WAIT_FOR,
    FILENAME,
    DIRECTORY,
    FILENAME_FORMAT,
    UNIQUE_FILENAME,
    LOCKFILE,
    OPENDIR,
    RW,
    RW_SEQUENCER,
    IOENGINE,
    IODEPTH,
    IODEPTH_BATCH,
    IODEPTH_BATCH_COMPLETE_MIN,
    IODEPTH_BATCH_COMPLETE_MAX,
    IODEPTH_LOW,
    SERIALIZE_OVERLAP,
    IO_SUBMIT_MODE,
    SIZE,
    IO_SIZE,
    FILL_DEVICE,
    FILESIZE,
    FILE_APPEND,
    OFFSET,
    OFFSET_ALIGN,
    OFFSET_INCREMENT,
    NUMBER_IOS,
    BS,
    BA,
    BSRANGE,
    BSSPLIT,
    BS_UNALIGNED,
    BS_IS_SEQ_RAND,
    RANDREPEAT,
    RANDSEED,
    NORANDOMMAP,
    SOFTRANDOMMAP,
    RANDOM_GENERATOR,
    RANDOM_DISTRIBUTION,
    PERCENTAGE_RANDOM,
    PERCENTAGE_SEQUENTIAL,
    ALLRANDREPEAT,
    NRFILES,
    OPENFILES,
    FILE_SERVICE_TYPE,
    FALLOCATE,
    FADVISE_HINT,
    FILETYPE,
    FSYNC,
    FDATASYNC,
    WRITE_BARRIER,
    SYNC_FILE_RANGE,
    DIRECT,
    ATOMIC,
    BUFFERED,
    OVERWRITE,
    LOOPS,
    NUMJOBS,
    STARTDELAY,
    RUNTIME,
    IO_STALL_WARN,
    IO_TIMEOUT,
    TIME_BASED,
    VERIFY_ONLY,
    RAMP_TIME,
    RAMP_SIZE,
    CLOCKSOURCE,
    MEM,
    IOMEM_ALIGN,
    VERIFY,
    DO_VERIFY,
    VERIFYSORT,
    VERIFYSORT_NR,
    VERIFY_INTERVAL,
    VERIFY_OFFSET,
    VERIFY_PATTERN,
    VERIFY_FATAL,
    VERIFY_DUMP,
    VERIFY_ASYNC,
    VERIFY_BACKLOG,
    VERIFY_BACKLOG_BATCH,
    VERIFY_ASYNC_CPUS,
    EXPERIMENTAL_VERIFY,
    VERIFY_STATE_LOAD,
    VERIFY_STATE_SAVE,
    TRIM_PERCENTAGE,
    TRIM_VERIFY_ZERO,
    TRIM_BACKLOG,
    TRIM_BACKLOG_BATCH,
    WRITE_IOLOG,
    READ_IOLOG,
    READ_IOLOG_CHUNKED,
    REPLAY_NO_STALL,
    REPLAY_REDIRECT,
    REPLAY_SCALE,
    REPLAY_ALIGN,
    REPLAY_TIME_SCALE,
    REPLAY_SKIP,
    MERGE_BLKTRACE_FILE,
    MERGE_BLKTRACE_SCALARS,
    MERGE_BLKTRACE_ITERS,
    EXEC_PRERUN,
    EXEC_POSTRUN,
    IOSCHEDULER,
    ZONEMODE,
    ZONESIZE,
    ZONECAPACITY,
    ZONERANGE,
    ZONESKIP,
    READ_BEYOND_WP,
    MAX_OPEN_ZONES,
    JOB_MAX_OPEN_ZONES,
    IGNORE_ZONE_LIMITS,
    ZONE_RESET_THRESHOLD,
    ZONE_RESET_FREQUENCY,
    LOCKMEM,
    RWMIXREAD,
    RWMIXWRITE,
    RWMIXCYCLE,
    NICE,
    PRIO,
    PRIOCLASS,
    THINKTIME,
    THINKCYCLES,
    THINKTIME_SPIN,
    THINKTIME_BLOCKS,
    THINKTIME_BLOCKS_TYPE,
    THINKTIME_IOTIME,
    RATE,
    RATE_MIN,
    RATE_IOPS,
    RATE_IOPS_MIN,
    RATE_PROCESS,
    ARRIVAL,
    RATE_CYCLE,
    RATE_IGNORE_THINKTIME,
    MAX_LATENCY,
    LATENCY_TARGET,
    LATENCY_WINDOW,
    LATENCY_PERCENTILE,
    LATENCY_RUN,
    INVALIDATE,
    SYNC,
    WRITE_HINT,
    CREATE_SERIALIZE,
    CREATE_FSYNC,
    CREATE_ON_OPEN,
    CREATE_ONLY,
    ALLOW_FILE_CREATE,
    ALLOW_MOUNTED_WRITE,
    PRE_READ,
    CPUMASK,
    CPUS_ALLOWED,
    CPUS_ALLOWED_POLICY,
    NUMA_CPU_NODES,
    NUMA_MEM_POLICY,
    END_FSYNC,
    END_SYNCFS,
    FSYNC_ON_CLOSE,
    UNLINK,
    UNLINK_EACH_LOOP,
    EXITALL,
    EXIT_WHAT,
    EXITALL_ON_ERROR,
    STONEWALL,
    NEW_GROUP,
    THREAD,
    PER_JOB_LOGS,
    WRITE_BW_LOG,
    WRITE_LAT_LOG,
    WRITE_IOPS_LOG,
    LOG_ENTRIES,
    LOG_AVG_MSEC,
    LOG_HIST_MSEC,
    LOG_HIST_COARSENESS,
    WRITE_HIST_LOG,
    LOG_MAX_VALUE,
    LOG_WINDOW_VALUE,
    LOG_ISSUE_TIME,
    LOG_OFFSET,
    LOG_PRIO,
    LOG_COMPRESSION,
    LOG_COMPRESSION_CPUS,
    LOG_STORE_COMPRESSED,
    LOG_UNIX_EPOCH,
    LOG_ALTERNATE_EPOCH,
    LOG_ALTERNATE_EPOCH_CLOCK_ID,
    BLOCK_ERROR_PERCENTILES,
    BWAVGTIME,
    IOPSAVGTIME,
    GROUP_REPORTING,
    STATS,
    ZERO_BUFFERS,
    REFILL_BUFFERS,
    SCRAMBLE_BUFFERS,
    BUFFER_PATTERN,
    BUFFER_COMPRESS_PERCENTAGE,
    BUFFER_COMPRESS_CHUNK,
    DEDUPE_PERCENTAGE,
    DEDUPE_GLOBAL,
    DEDUPE_MODE,
    DEDUPE_WORKING_SET_PERCENTAGE,
    CLAT_PERCENTILES,
    LAT_PERCENTILES,
    SLAT_PERCENTILES,
    PERCENTILE_LIST,
    SIGNIFICANT_FIGURES,
    DISK_UTIL,
    GTOD_REDUCE,
    DISABLE_LAT,
    DISABLE_CLAT,
    DISABLE_SLAT,
    DISABLE_BW_MEASUREMENT,
    GTOD_CPU,
    UNIFIED_RW_REPORTING,
    CONTINUE_ON_ERROR,
    IGNORE_ERROR,
    ERROR_DUMP,
    PROFILE,
    CGROUP,
    CGROUP_NODELETE,
    CGROUP_WEIGHT,
    UID,
    GID,
    KB_BASE,
    UNIT_BASE,
    HUGEPAGE_SIZE,
    FLOW_ID,
    FLOW,
    FLOW_WATERMARK,
    FLOW_SLEEP,
    STEADYSTATE,
    STEADYSTATE_DURATION,
    STEADYSTATE_RAMP_TIME,
    STEADYSTATE_CHECK_INTERVAL,
    COMM,
    JOB_START_CLOCK_ID,
    PRIOHINT,
    FDP,
    DATAPLACEMENT,
    PLIDS,
    PLID_SELECT,
    DP_SCHEME,
    NUM_RANGE,
    SPRANDOM,
    SPR_OP,
    SPR_NUM_REGIONS,
    SPR_CS,
    VERIFY_WRITE_SEQUENCE,
    VERIFY_HEADER_SEED,
    VERIFY_PATTERN_INTERVAL,
    RECOVER_ZBD_WRITE_ERROR,
    WRITE_ZONE_REMAINDER,
];

pub const DESCRIPTION: OptDef =
    opt("description", K::Str, "Free text describing the job").cat(C::Description);

pub const NAME: OptDef = opt(
    "name",
    K::Str,
    "Names the job; on the command line it also starts a new one",
)
.cat(C::Description);

pub const WAIT_FOR: OptDef = opt(
    "wait_for",
    K::Str,
    "Start only after the named job has finished",
)
.cat(C::Description);

pub const FILENAME_FORMAT: OptDef = opt(
    "filename_format",
    K::Str,
    "Pattern for generated file names ($jobname, $jobnum, $filenum, $clientuid)",
)
.def("$jobname.$jobnum.$filenum")
.cat(C::File)
.prio(-1);

pub const UNIQUE_FILENAME: OptDef = opt(
    "unique_filename",
    K::Bool,
    "With client/server runs, put the server's address in front of the names of files in a directory, as fio's server does",
)
.def("1")
.cat(C::File)
.range(0, 1);

pub const LOCKFILE: OptDef = opt(
    "lockfile",
    K::Choice(LOCKFILE_CHOICES),
    "How to lock each file while doing I/O on it",
)
.def("none")
.cat(C::File)
.parent("filename")
.prio(1);

pub const OPENDIR: OptDef = opt(
    "opendir",
    K::Str,
    "Use every file found under this directory, recursively",
)
.cat(C::File);

pub const RW_SEQUENCER: OptDef = opt(
    "rw_sequencer",
    K::Choice(RW_SEQUENCER_CHOICES),
    "How the ':N' modifier of rw picks the next offset",
)
.def("sequential")
.cat(C::Io);

pub const IOENGINE: OptDef = opt(
    "ioengine",
    K::Choice(IOENGINE_CHOICES),
    "How I/O is issued (psync, libaio, io_uring, ...)",
)
.def("psync")
.cat(C::Io);

pub const IODEPTH: OptDef = opt(
    "iodepth",
    K::Int {
        min: 1,
        max: INT_MAX,
    },
    "How many I/Os to keep in flight",
)
.def("1")
.cat(C::Io)
.range(1, INT_MAX);

pub const IODEPTH_BATCH: OptDef = opt(
    "iodepth_batch",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Submit this many I/Os at once",
)
.alias(&["iodepth_batch_submit"])
.def("1")
.cat(C::Io)
.parent("iodepth")
.range(0, INT_MAX);

pub const IODEPTH_BATCH_COMPLETE_MIN: OptDef = opt(
    "iodepth_batch_complete_min",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Reap at least this many completions at once",
)
.alias(&["iodepth_batch_complete"])
.def("1")
.cat(C::Io)
.parent("iodepth")
.range(0, INT_MAX);

pub const IODEPTH_BATCH_COMPLETE_MAX: OptDef = opt(
    "iodepth_batch_complete_max",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Reap at most this many completions at once",
)
.cat(C::Io)
.parent("iodepth")
.range(0, INT_MAX);

pub const IODEPTH_LOW: OptDef = opt(
    "iodepth_low",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Refill the queue only once it has drained to this depth",
)
.cat(C::Io)
.parent("iodepth")
.range(0, INT_MAX);

pub const SERIALIZE_OVERLAP: OptDef = opt(
    "serialize_overlap",
    K::Bool,
    "Hold back an I/O until in-flight I/Os that overlap it are done",
)
.def("0")
.cat(C::Io)
.parent("iodepth")
.range(0, 1);

pub const IO_SUBMIT_MODE: OptDef = opt(
    "io_submit_mode",
    K::Choice(IO_SUBMIT_MODE_CHOICES),
    "Submit I/O from the job itself or from a helper thread pool",
)
.def("inline")
.cat(C::Io);

pub const IO_SIZE: OptDef = opt(
    "io_size",
    K::SizeOrPercent,
    "Total bytes of I/O to do, if different from size",
)
.alias(&["io_limit"])
.cat(C::Io);

pub const FILL_DEVICE: OptDef = opt(
    "fill_device",
    K::Bool,
    "Write until the device or file system is full",
)
.alias(&["fill_fs"])
.def("0")
.cat(C::File)
.range(0, 1);

pub const FILE_APPEND: OptDef = opt(
    "file_append",
    K::Bool,
    "Start I/O at the current end of each file",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const OFFSET_ALIGN: OptDef = opt(
    "offset_align",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Round a percentage offset to this alignment",
)
.def("0")
.cat(C::Io)
.range(0, INT_MAX);

pub const OFFSET_INCREMENT: OptDef = opt(
    "offset_increment",
    K::SizeOrPercent,
    "Extra start offset for each further clone of the job",
)
.def("0")
.cat(C::Io)
.parent("offset");

pub const NUMBER_IOS: OptDef = opt(
    "number_ios",
    K::Size,
    "Stop after this many I/Os, whatever the size",
)
.def("0")
.cat(C::Io);

pub const BA: OptDef = opt(
    "ba",
    K::SizeList,
    "Align random offsets to this many bytes, per direction",
)
.alias(&["blockalign"])
.cat(C::Io)
.parent("rw")
.range(1, INT_MAX);

pub const BS_UNALIGNED: OptDef = opt(
    "bs_unaligned",
    K::Bool,
    "Allow block sizes that are not a multiple of the sector size",
)
.alias(&["blocksize_unaligned"])
.cat(C::Io)
.parent("rw");

pub const BS_IS_SEQ_RAND: OptDef = opt(
    "bs_is_seq_rand",
    K::Bool,
    "Read the bs directions as sequential,random instead of read,write",
)
.def("0")
.cat(C::Io)
.parent("blocksize")
.range(0, 1);

pub const RANDREPEAT: OptDef = opt(
    "randrepeat",
    K::Bool,
    "Seed the random offsets the same way on every run",
)
.def("1")
.cat(C::Io)
.parent("rw")
.range(0, 1);

pub const NORANDOMMAP: OptDef = opt(
    "norandommap",
    K::Bool,
    "Let random I/O hit blocks more than once per pass",
)
.cat(C::Io)
.parent("rw");

pub const SOFTRANDOMMAP: OptDef = opt(
    "softrandommap",
    K::Bool,
    "Continue without the random map when it cannot be allocated",
)
.def("0")
.cat(C::Io)
.parent("norandommap")
.range(0, 1);

pub const RANDOM_GENERATOR: OptDef = opt(
    "random_generator",
    K::Choice(RANDOM_GENERATOR_CHOICES),
    "Which pseudo random number generator makes offsets",
)
.def("tausworthe")
.cat(C::Io);

pub const RANDOM_DISTRIBUTION: OptDef = opt(
    "random_distribution",
    K::Choice(RANDOM_DISTRIBUTION_CHOICES),
    "How random offsets are spread over the file",
)
.def("random")
.cat(C::Io);

pub const PERCENTAGE_RANDOM: OptDef = opt(
    "percentage_random",
    K::IntList { min: 0, max: 100 },
    "Share of I/O that is random in a mixed sequential/random job",
)
.def("100,100,100")
.cat(C::Io)
.range(0, 100);

pub const PERCENTAGE_SEQUENTIAL: OptDef = opt(
    "percentage_sequential",
    K::Deprecated,
    "Obsolete; use percentage_random",
)
.cat(C::Io);

pub const ALLRANDREPEAT: OptDef = opt(
    "allrandrepeat",
    K::Bool,
    "Seed every random generator the same way on every run",
)
.def("0")
.cat(C::Io)
.range(0, 1);

pub const NRFILES: OptDef = opt(
    "nrfiles",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many files this job spreads its I/O over",
)
.alias(&["nr_files"])
.def("1")
.cat(C::File)
.range(0, INT_MAX);

pub const OPENFILES: OptDef = opt(
    "openfiles",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many of the job's files may be open at one time",
)
.cat(C::File)
.range(0, INT_MAX);

pub const FILE_SERVICE_TYPE: OptDef = opt(
    "file_service_type",
    K::Choice(FILE_SERVICE_TYPE_CHOICES),
    "How the next file to do I/O on is picked",
)
.def("roundrobin")
.cat(C::File)
.parent("nrfiles");

pub const FALLOCATE: OptDef = opt(
    "fallocate",
    K::Choice(FALLOCATE_CHOICES),
    "How file space is reserved when files are laid out",
)
.def("native")
.cat(C::File);

pub const FADVISE_HINT: OptDef = opt(
    "fadvise_hint",
    K::Choice(FADVISE_HINT_CHOICES),
    "Tell the kernel the expected access pattern with posix_fadvise",
)
.def("1")
.cat(C::File)
.later(&[("noreuse", F::V3_35)]);

pub const FSYNC: OptDef = opt(
    "fsync",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Call fsync after this many writes",
)
.def("0")
.cat(C::File)
.range(0, INT_MAX);

pub const FDATASYNC: OptDef = opt(
    "fdatasync",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Call fdatasync after this many writes",
)
.def("0")
.cat(C::File)
.range(0, INT_MAX);

pub const WRITE_BARRIER: OptDef = opt(
    "write_barrier",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Make every Nth write a barrier write",
)
.def("0")
.cat(C::Io)
.range(0, INT_MAX);

pub const SYNC_FILE_RANGE: OptDef = opt(
    "sync_file_range",
    K::Choice(SYNC_FILE_RANGE_CHOICES),
    "Call sync_file_range with these flags every N writes (flags:N)",
)
.cat(C::File);

pub const DIRECT: OptDef = opt("direct", K::Bool, "Bypass the page cache with O_DIRECT")
    .def("0")
    .cat(C::Io)
    .range(0, 1);

pub const ATOMIC: OptDef = opt("atomic", K::Bool, "Ask for atomic writes with O_DIRECT")
    .def("0")
    .cat(C::Io)
    .range(0, 1);

pub const BUFFERED: OptDef = opt(
    "buffered",
    K::Bool,
    "Go through the page cache (the opposite of direct)",
)
.def("1")
.cat(C::Io)
.range(0, 1);

pub const OVERWRITE: OptDef = opt(
    "overwrite",
    K::Bool,
    "Lay files out fully first, so writes replace existing data",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const LOOPS: OptDef = opt(
    "loops",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Repeat the whole job this many times",
)
.def("1")
.cat(C::Other)
.range(0, INT_MAX);

pub const NUMJOBS: OptDef = opt(
    "numjobs",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Run this many copies of the job",
)
.def("1")
.cat(C::Other)
.range(0, INT_MAX);

pub const STARTDELAY: OptDef = opt(
    "startdelay",
    K::Time(TimeUnit::Sec),
    "Wait this long (or a random time in a range) before starting",
)
.def("0")
.cat(C::Other);

pub const RUNTIME: OptDef = opt(
    "runtime",
    K::Time(TimeUnit::Sec),
    "Stop the job after this long",
)
.alias(&["timeout"])
.def("0")
.cat(C::Other);

pub const IO_STALL_WARN: OptDef = opt(
    "io_stall_warn",
    K::Time(TimeUnit::Sec),
    "iobench extension, not in fio: warn once (on stderr) when an I/O is outstanding \
     this long, naming its file, offset, size and age (0: never)",
)
.def("30")
.cat(C::Other)
.iobench_only();

pub const TIME_BASED: OptDef = opt(
    "time_based",
    K::Bool,
    "Keep running until runtime has passed, repeating the work",
)
.cat(C::Other);

pub const VERIFY_ONLY: OptDef = opt(
    "verify_only",
    K::Bool,
    "Only read back and check data written by an earlier run",
)
.cat(C::Other);

pub const RAMP_TIME: OptDef = opt(
    "ramp_time",
    K::Time(TimeUnit::Sec),
    "Run this long before counting statistics",
)
.cat(C::Other);

pub const CLOCKSOURCE: OptDef = opt(
    "clocksource",
    K::Choice(CLOCKSOURCE_CHOICES),
    "Which clock latencies are measured with (default: cpu when the TSC is invariant, as fio)",
)
.cat(C::Other);

pub const MEM: OptDef = opt(
    "mem",
    K::Choice(MEM_CHOICES),
    "Where I/O buffers come from (malloc, shared memory, mmap, huge pages)",
)
.alias(&["iomem"])
.def("malloc")
.cat(C::Io);

pub const IOMEM_ALIGN: OptDef = opt(
    "iomem_align",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Align I/O buffers in memory to this many bytes",
)
.alias(&["mem_align"])
.def("0")
.cat(C::Io)
.parent("iomem")
.range(0, INT_MAX);

pub const DO_VERIFY: OptDef = opt("do_verify", K::Bool, "Run the verify pass after writing")
    .def("1")
    .cat(C::Verify)
    .parent("verify")
    .range(0, 1);

pub const VERIFYSORT: OptDef =
    opt("verifysort", K::Deprecated, "Obsolete; has no effect").cat(C::Verify);

pub const VERIFYSORT_NR: OptDef =
    opt("verifysort_nr", K::Deprecated, "Obsolete; has no effect").cat(C::Verify);

pub const VERIFY_INTERVAL: OptDef = opt(
    "verify_interval",
    K::Int {
        min: 80,
        max: INT_MAX,
    },
    "Write a verify header every this many bytes of a block",
)
.cat(C::Verify)
.parent("verify")
.range(80, INT_MAX);

pub const VERIFY_OFFSET: OptDef = opt(
    "verify_offset",
    K::Int {
        min: 40,
        max: INT_MAX,
    },
    "Place the verify header this far into the block",
)
.cat(C::Verify)
.parent("verify")
.range(40, INT_MAX);

pub const VERIFY_PATTERN: OptDef = opt(
    "verify_pattern",
    K::Special,
    "The data pattern written and checked by verify=pattern",
)
.cat(C::Verify)
.parent("verify");

pub const VERIFY_FATAL: OptDef = opt(
    "verify_fatal",
    K::Bool,
    "Stop the job at the first verify mismatch",
)
.def("0")
.cat(C::Verify)
.parent("verify")
.range(0, 1);

pub const VERIFY_DUMP: OptDef = opt(
    "verify_dump",
    K::Bool,
    "Save the expected and actual data of a failed verify to files",
)
.def("0")
.cat(C::Verify)
.parent("verify")
.range(0, 1);

pub const VERIFY_ASYNC: OptDef = opt(
    "verify_async",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many threads check data in the background",
)
.def("0")
.cat(C::Verify)
.parent("verify")
.range(0, INT_MAX);

pub const VERIFY_BACKLOG: OptDef = opt(
    "verify_backlog",
    K::Size,
    "Verify written blocks after this many have been written",
)
.cat(C::Verify)
.parent("verify");

pub const VERIFY_BACKLOG_BATCH: OptDef = opt(
    "verify_backlog_batch",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many blocks to check at each backlog verify",
)
.cat(C::Verify)
.parent("verify")
.range(0, INT_MAX);

pub const VERIFY_ASYNC_CPUS: OptDef = opt(
    "verify_async_cpus",
    K::Special,
    "CPUs the background verify threads may run on",
)
.cat(C::Verify)
.parent("verify_async");

pub const EXPERIMENTAL_VERIFY: OptDef = opt(
    "experimental_verify",
    K::Bool,
    "Verify by replaying offsets instead of remembering them",
)
.cat(C::Verify)
.parent("verify")
.range(0, 1);

pub const VERIFY_STATE_LOAD: OptDef = opt(
    "verify_state_load",
    K::Bool,
    "Resume verification from a saved state file",
)
.cat(C::Verify)
.parent("verify")
.range(0, 1);

pub const VERIFY_STATE_SAVE: OptDef = opt(
    "verify_state_save",
    K::Bool,
    "Save the verify state when the job ends",
)
.def("1")
.cat(C::Verify)
.parent("verify")
.range(0, 1);

pub const TRIM_PERCENTAGE: OptDef = opt(
    "trim_percentage",
    K::Int { min: 0, max: 100 },
    "Share of verified blocks to discard (trim)",
)
.def("0")
.cat(C::Verify)
.parent("verify")
.range(0, 100);

pub const TRIM_VERIFY_ZERO: OptDef = opt(
    "trim_verify_zero",
    K::Bool,
    "Check that trimmed blocks read back as zeroes",
)
.def("1")
.cat(C::Verify)
.parent("trim_percentage")
.range(0, 1);

pub const TRIM_BACKLOG: OptDef = opt(
    "trim_backlog",
    K::Size,
    "Trim after this many blocks have been written",
)
.cat(C::Verify)
.parent("trim_percentage");

pub const TRIM_BACKLOG_BATCH: OptDef = opt(
    "trim_backlog_batch",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many blocks to trim at each backlog point",
)
.cat(C::Verify)
.parent("trim_percentage")
.range(0, INT_MAX);

pub const WRITE_IOLOG: OptDef =
    opt("write_iolog", K::Str, "Record the job's I/O to this file").cat(C::Io);

pub const READ_IOLOG: OptDef = opt(
    "read_iolog",
    K::Str,
    "Replay the I/O recorded in this file (or blktrace)",
)
.cat(C::Io);

pub const READ_IOLOG_CHUNKED: OptDef = opt(
    "read_iolog_chunked",
    K::Bool,
    "Read the replay file a piece at a time",
)
.def("0")
.cat(C::Io)
.parent("read_iolog")
.range(0, 1);

pub const REPLAY_NO_STALL: OptDef = opt(
    "replay_no_stall",
    K::Bool,
    "Replay without the recorded delays between I/Os",
)
.def("0")
.cat(C::Io)
.parent("read_iolog")
.range(0, 1);

pub const REPLAY_REDIRECT: OptDef = opt(
    "replay_redirect",
    K::Str,
    "Send replayed I/O to this device instead of the recorded one",
)
.cat(C::Io)
.parent("read_iolog");

pub const REPLAY_SCALE: OptDef = opt(
    "replay_scale",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Divide replayed offsets by this factor",
)
.def("1")
.cat(C::Io)
.parent("read_iolog")
.range(0, INT_MAX);

pub const REPLAY_ALIGN: OptDef = opt(
    "replay_align",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Align replayed offsets to this many bytes",
)
.cat(C::Io)
.parent("read_iolog")
.range(0, INT_MAX);

pub const REPLAY_TIME_SCALE: OptDef = opt(
    "replay_time_scale",
    K::Int {
        min: 1,
        max: INT_MAX,
    },
    "Replay timing scaled by this percentage",
)
.def("100")
.cat(C::Io)
.parent("read_iolog")
.range(1, INT_MAX);

pub const REPLAY_SKIP: OptDef = opt(
    "replay_skip",
    K::Special,
    "Leave out these kinds of I/O when replaying a blktrace (read,write,trim,sync)",
)
.cat(C::Io)
.parent("read_iolog");

pub const MERGE_BLKTRACE_FILE: OptDef = opt(
    "merge_blktrace_file",
    K::Str,
    "Write the merged blktrace traces to this file",
)
.cat(C::Io);

pub const MERGE_BLKTRACE_SCALARS: OptDef = opt(
    "merge_blktrace_scalars",
    K::FloatList,
    "Per trace, the percentage its timing is scaled to when merging",
)
.cat(C::Io);

pub const MERGE_BLKTRACE_ITERS: OptDef = opt(
    "merge_blktrace_iters",
    K::FloatList,
    "Per trace, how many times it is repeated when merging",
)
.cat(C::Io);

pub const EXEC_PRERUN: OptDef = opt(
    "exec_prerun",
    K::Str,
    "Run this shell command before the job starts; its output goes to <job>.prerun.txt",
)
.cat(C::Other);

pub const EXEC_POSTRUN: OptDef = opt(
    "exec_postrun",
    K::Str,
    "Run this shell command after the job ends; its output goes to <job>.postrun.txt",
)
.cat(C::Other);

pub const IOSCHEDULER: OptDef = opt(
    "ioscheduler",
    K::Str,
    "Switch the device's I/O scheduler to this one",
)
.cat(C::File);

pub const ZONEMODE: OptDef = opt(
    "zonemode",
    K::Choice(ZONEMODE_CHOICES),
    "How the device is split into zones",
)
.def("none")
.cat(C::Target);

pub const ZONECAPACITY: OptDef = opt("zonecapacity", K::Size, "Usable bytes of each zone")
    .def("0")
    .cat(C::Target);

pub const ZONERANGE: OptDef = opt("zonerange", K::Size, "Size of each zone")
    .def("0")
    .cat(C::Target);

pub const ZONESKIP: OptDef = opt("zoneskip", K::SizeOrPercent, "Bytes skipped between zones")
    .def("0")
    .cat(C::Target);

pub const READ_BEYOND_WP: OptDef = opt(
    "read_beyond_wp",
    K::Bool,
    "With zbd, allow reads past a zone's write pointer",
)
.def("0")
.cat(C::Io)
.range(0, 1);

pub const MAX_OPEN_ZONES: OptDef = opt(
    "max_open_zones",
    K::Int { min: 0, max: 4096 },
    "With zbd, at most this many sequential zones written at once",
)
.def("0")
.cat(C::Io)
.range(0, 4096);

pub const JOB_MAX_OPEN_ZONES: OptDef = opt(
    "job_max_open_zones",
    K::Int { min: 0, max: 4096 },
    "With zbd, at most this many zones written at once by one job",
)
.def("0")
.cat(C::Io)
.range(0, 4096);

pub const IGNORE_ZONE_LIMITS: OptDef = opt(
    "ignore_zone_limits",
    K::Bool,
    "Do not apply the open/active zone limits the device reports",
)
.def("0")
.cat(C::Io)
.range(0, 1);

pub const ZONE_RESET_THRESHOLD: OptDef = opt(
    "zone_reset_threshold",
    K::FloatList,
    "With zbd, the share of written zones that triggers resets",
)
.cat(C::Target)
.range(0, 1);

pub const ZONE_RESET_FREQUENCY: OptDef = opt(
    "zone_reset_frequency",
    K::FloatList,
    "With zbd, how often zones are reset (0 to 1)",
)
.cat(C::Target)
.range(0, 1);

pub const LOCKMEM: OptDef = opt(
    "lockmem",
    K::Size,
    "Pin this much memory so the job runs with less available",
)
.def("0")
.cat(C::Other);

pub const RWMIXREAD: OptDef = opt(
    "rwmixread",
    K::Int { min: 0, max: 100 },
    "In a mixed job, the percentage of I/O that reads",
)
.def("50")
.cat(C::Io)
.range(0, 100);

pub const RWMIXWRITE: OptDef = opt(
    "rwmixwrite",
    K::Int { min: 0, max: 100 },
    "In a mixed job, the percentage of I/O that writes",
)
.def("50")
.cat(C::Io)
.range(0, 100);

pub const RWMIXCYCLE: OptDef =
    opt("rwmixcycle", K::Deprecated, "Obsolete; has no effect").cat(C::Io);

pub const NICE: OptDef = opt(
    "nice",
    K::Int { min: -20, max: 19 },
    "Run the job at this nice level",
)
.def("0")
.cat(C::Other)
.range(-20, 19);

pub const THINKTIME: OptDef = opt(
    "thinktime",
    K::Time(TimeUnit::Usec),
    "Pause this long between I/Os (bare numbers in usec)",
)
.def("0")
.cat(C::Io)
.range(0, INT_MAX);

pub const THINKTIME_SPIN: OptDef = opt(
    "thinktime_spin",
    K::Time(TimeUnit::Usec),
    "Spend this much of the pause busy-looping instead of sleeping",
)
.def("0")
.cat(C::Io)
.parent("thinktime")
.range(0, INT_MAX);

pub const THINKTIME_BLOCKS: OptDef = opt(
    "thinktime_blocks",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Pause after this many I/Os instead of after each one",
)
.def("1")
.cat(C::Io)
.parent("thinktime")
.range(0, INT_MAX);

pub const THINKTIME_BLOCKS_TYPE: OptDef = opt(
    "thinktime_blocks_type",
    K::Choice(THINKTIME_BLOCKS_TYPE_CHOICES),
    "Count thinktime_blocks by completed or issued I/Os",
)
.def("complete")
.cat(C::Io)
.parent("thinktime");

pub const THINKTIME_IOTIME: OptDef = opt(
    "thinktime_iotime",
    K::Time(TimeUnit::Sec),
    "Pause after doing I/O for this long",
)
.def("0")
.cat(C::Io)
.parent("thinktime")
.range(0, INT_MAX);

pub const RATE: OptDef = opt("rate", K::SizeList, "Cap the bandwidth, per direction")
    .cat(C::Rate)
    .range(0, INT_MAX);

pub const RATE_MIN: OptDef = opt(
    "rate_min",
    K::SizeList,
    "Fail the job when bandwidth falls under this, per direction",
)
.alias(&["ratemin"])
.cat(C::Rate)
.parent("rate")
.range(0, INT_MAX);

pub const RATE_IOPS: OptDef = opt(
    "rate_iops",
    K::IntList {
        min: 0,
        max: INT_MAX,
    },
    "Cap the I/Os per second, per direction",
)
.cat(C::Rate)
.range(0, INT_MAX);

pub const RATE_IOPS_MIN: OptDef = opt(
    "rate_iops_min",
    K::IntList {
        min: 0,
        max: INT_MAX,
    },
    "Fail the job when IOPS falls under this, per direction",
)
.cat(C::Rate)
.parent("rate_iops")
.range(0, INT_MAX);

pub const RATE_PROCESS: OptDef = opt(
    "rate_process",
    K::Choice(RATE_PROCESS_CHOICES),
    "How I/Os are spread in time under a rate cap",
)
.def("linear")
.cat(C::Rate)
.parent("rate");

pub const ARRIVAL: OptDef = opt(
    "arrival",
    K::Choice(ARRIVAL_CHOICES),
    "iobench extension, not in fio: with rate or rate_iops, issue each I/O at its \
     scheduled time whatever the completions do (up to iodepth; a full queue is \
     counted as backlog), and report latency from the scheduled start (sched_lat)",
)
.def("closed")
.cat(C::Rate)
.iobench_only();

pub const RATE_CYCLE: OptDef = opt(
    "rate_cycle",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Window in msec over which rate_min is checked",
)
.alias(&["ratecycle"])
.def("1000")
.cat(C::Rate)
.parent("rate")
.range(0, INT_MAX);

pub const RATE_IGNORE_THINKTIME: OptDef = opt(
    "rate_ignore_thinktime",
    K::Bool,
    "Keep the rate target even while pausing for thinktime",
)
.cat(C::Rate)
.parent("rate")
.range(0, 1);

pub const MAX_LATENCY: OptDef = opt(
    "max_latency",
    K::Time(TimeUnit::Usec),
    "Fail the job when an I/O takes longer than this, per direction",
)
.cat(C::Latency)
.range(0, INT_MAX);

pub const LATENCY_TARGET: OptDef = opt(
    "latency_target",
    K::Time(TimeUnit::Usec),
    "Find the largest queue depth that keeps latency under this",
)
.cat(C::Latency);

pub const LATENCY_WINDOW: OptDef = opt(
    "latency_window",
    K::Time(TimeUnit::Usec),
    "How long each depth is tried by latency_target",
)
.cat(C::Latency);

pub const LATENCY_PERCENTILE: OptDef = opt(
    "latency_percentile",
    K::FloatList,
    "Share of I/Os that must meet latency_target",
)
.def("100")
.cat(C::Latency)
.range(0, 100);

pub const LATENCY_RUN: OptDef = opt(
    "latency_run",
    K::Bool,
    "Keep tuning the depth for latency_target for the whole run",
)
.def("0")
.cat(C::Latency)
.range(0, 1);

pub const INVALIDATE: OptDef = opt(
    "invalidate",
    K::Bool,
    "Drop the file's cached pages before starting",
)
.def("1")
.cat(C::Io)
.range(0, 1);

pub const SYNC: OptDef = opt(
    "sync",
    K::Choice(SYNC_CHOICES),
    "Open files for synchronous writes (O_SYNC or O_DSYNC)",
)
.def("none")
.cat(C::Io);

pub const WRITE_HINT: OptDef = opt(
    "write_hint",
    K::Choice(WRITE_HINT_CHOICES),
    "Tell the device how long written data is expected to live",
)
.cat(C::Engine);

pub const CREATE_SERIALIZE: OptDef = opt(
    "create_serialize",
    K::Bool,
    "Lay out the files of cloned jobs one after the other",
)
.def("1")
.cat(C::File)
.range(0, 1);

pub const CREATE_FSYNC: OptDef = opt(
    "create_fsync",
    K::Bool,
    "fsync each file after laying it out",
)
.def("1")
.cat(C::File)
.range(0, 1);

pub const CREATE_ON_OPEN: OptDef = opt(
    "create_on_open",
    K::Bool,
    "Create files only when they are first opened for I/O",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const CREATE_ONLY: OptDef = opt("create_only", K::Bool, "Only lay out the files, then stop")
    .def("0")
    .cat(C::File)
    .range(0, 1);

pub const ALLOW_FILE_CREATE: OptDef = opt(
    "allow_file_create",
    K::Bool,
    "May create files that do not exist yet",
)
.def("1")
.cat(C::File)
.range(0, 1);

pub const ALLOW_MOUNTED_WRITE: OptDef = opt(
    "allow_mounted_write",
    K::Bool,
    "May write to a block device that has a mounted file system",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const PRE_READ: OptDef = opt(
    "pre_read",
    K::Bool,
    "Read the files into the page cache before starting",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const CPUMASK: OptDef = opt(
    "cpumask",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "CPUs the job may run on, as a bit mask",
)
.cat(C::Other)
.range(0, INT_MAX);

pub const CPUS_ALLOWED: OptDef = opt(
    "cpus_allowed",
    K::Special,
    "CPUs the job may run on, as a list such as 0-3,6",
)
.cat(C::Other);

pub const CPUS_ALLOWED_POLICY: OptDef = opt(
    "cpus_allowed_policy",
    K::Choice(CPUS_ALLOWED_POLICY_CHOICES),
    "Whether cloned jobs share the CPU set or split it",
)
.cat(C::Other)
.parent("cpus_allowed")
.prio(1);

pub const NUMA_CPU_NODES: OptDef = opt(
    "numa_cpu_nodes",
    K::Special,
    "Run the job on the CPUs of these NUMA nodes",
)
.cat(C::Other);

pub const NUMA_MEM_POLICY: OptDef = opt(
    "numa_mem_policy",
    K::Special,
    "Memory placement policy for the job (e.g. bind:0)",
)
.cat(C::Other);

pub const END_FSYNC: OptDef = opt(
    "end_fsync",
    K::Bool,
    "fsync the files when the job is done writing",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const FSYNC_ON_CLOSE: OptDef = opt(
    "fsync_on_close",
    K::Bool,
    "fsync each file when it is closed",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const UNLINK: OptDef = opt("unlink", K::Bool, "Delete the job's files when it finishes")
    .def("0")
    .cat(C::File)
    .range(0, 1);

pub const UNLINK_EACH_LOOP: OptDef = opt(
    "unlink_each_loop",
    K::Bool,
    "Delete the job's files after each loop",
)
.def("0")
.cat(C::File)
.range(0, 1);

pub const EXITALL: OptDef =
    opt("exitall", K::Bool, "End every job when this one ends").cat(C::Other);

pub const EXIT_WHAT: OptDef = opt(
    "exit_what",
    K::Choice(EXIT_WHAT_CHOICES),
    "Which jobs exitall ends",
)
.def("group")
.cat(C::Other);

pub const EXITALL_ON_ERROR: OptDef = opt(
    "exitall_on_error",
    K::Bool,
    "End every job when this one fails",
)
.cat(C::Other);

pub const STONEWALL: OptDef = opt(
    "stonewall",
    K::Bool,
    "Wait for earlier jobs to finish, and start a new group",
)
.alias(&["wait_for_previous"])
.cat(C::Other);

pub const NEW_GROUP: OptDef =
    opt("new_group", K::Bool, "Start a new reporting group").cat(C::Other);

pub const THREAD: OptDef = opt(
    "thread",
    K::Bool,
    "Run jobs as threads rather than forked processes",
)
.cat(C::Other);

pub const PER_JOB_LOGS: OptDef = opt(
    "per_job_logs",
    K::Bool,
    "Put the job number in log file names",
)
.def("1")
.cat(C::Log)
.range(0, 1);

pub const WRITE_BW_LOG: OptDef = opt(
    "write_bw_log",
    K::Str,
    "Log bandwidth over time to files with this prefix",
)
.cat(C::Log);

pub const WRITE_LAT_LOG: OptDef = opt(
    "write_lat_log",
    K::Str,
    "Log latencies over time to files with this prefix",
)
.cat(C::Log);

pub const WRITE_IOPS_LOG: OptDef = opt(
    "write_iops_log",
    K::Str,
    "Log IOPS over time to files with this prefix",
)
.cat(C::Log);

pub const LOG_ENTRIES: OptDef = opt(
    "log_entries",
    K::Int {
        min: 1024,
        max: 1048576,
    },
    "How many log entries to allocate at first",
)
.def("1024")
.cat(C::Log)
.range(1024, 1048576);

pub const LOG_AVG_MSEC: OptDef = opt(
    "log_avg_msec",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Average log samples over this many msec",
)
.def("0")
.cat(C::Log)
.range(0, INT_MAX);

pub const LOG_HIST_MSEC: OptDef = opt(
    "log_hist_msec",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Log latency histograms every this many msec",
)
.def("0")
.cat(C::Log)
.range(0, INT_MAX);

pub const LOG_HIST_COARSENESS: OptDef = opt(
    "log_hist_coarseness",
    K::Int { min: 0, max: 6 },
    "Merge histogram buckets: 0 keeps all, each step halves them",
)
.def("0")
.cat(C::Log)
.range(0, 6);

pub const WRITE_HIST_LOG: OptDef = opt(
    "write_hist_log",
    K::Str,
    "Log latency histograms to files with this prefix",
)
.cat(C::Log);

pub const LOG_MAX_VALUE: OptDef = opt(
    "log_max_value",
    K::Bool,
    "Log the largest value in each window instead of the mean",
)
.def("0")
.cat(C::Log)
.range(0, 1);

pub const LOG_OFFSET: OptDef = opt(
    "log_offset",
    K::Bool,
    "Add each I/O's offset to log entries",
)
.def("0")
.cat(C::Log)
.range(0, 1);

pub const LOG_PRIO: OptDef = opt(
    "log_prio",
    K::Bool,
    "Add each I/O's priority to log entries",
)
.def("0")
.cat(C::Log)
.range(0, 1);

pub const LOG_COMPRESSION: OptDef = opt(
    "log_compression",
    K::Int {
        min: 1024,
        max: 536870912,
    },
    "Compress logs in memory in chunks of this size",
)
.cat(C::Log)
.range(1024, 536870912);

pub const LOG_COMPRESSION_CPUS: OptDef = opt(
    "log_compression_cpus",
    K::Special,
    "CPUs the log compression threads may run on",
)
.cat(C::Log)
.parent("log_compression");

pub const LOG_STORE_COMPRESSED: OptDef = opt(
    "log_store_compressed",
    K::Bool,
    "Write logs to disk compressed",
)
.cat(C::Log)
.range(0, 1);

pub const LOG_UNIX_EPOCH: OptDef = opt(
    "log_unix_epoch",
    K::Bool,
    "Stamp log entries with Unix time",
)
.cat(C::Log)
.range(0, 1);

pub const LOG_ALTERNATE_EPOCH: OptDef = opt(
    "log_alternate_epoch",
    K::Bool,
    "Stamp log entries with the time of log_alternate_epoch_clock_id",
)
.cat(C::Log)
.range(0, 1);

pub const LOG_ALTERNATE_EPOCH_CLOCK_ID: OptDef = opt(
    "log_alternate_epoch_clock_id",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "The clock_gettime clock used for log time stamps",
)
.cat(C::Log)
.range(0, INT_MAX);

pub const BLOCK_ERROR_PERCENTILES: OptDef = opt(
    "block_error_percentiles",
    K::Bool,
    "Report percentiles of trim block errors",
)
.def("0")
.cat(C::Log)
.range(0, 1);

pub const BWAVGTIME: OptDef = opt(
    "bwavgtime",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Average bandwidth samples over this many msec",
)
.def("500")
.cat(C::Log)
.parent("write_bw_log")
.range(0, INT_MAX);

pub const IOPSAVGTIME: OptDef = opt(
    "iopsavgtime",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Average IOPS samples over this many msec",
)
.def("500")
.cat(C::Log)
.parent("write_iops_log")
.range(0, INT_MAX);

pub const GROUP_REPORTING: OptDef =
    opt("group_reporting", K::Bool, "Report each group as one job").cat(C::Stat);

pub const STATS: OptDef = opt("stats", K::Bool, "Collect statistics for this job")
    .def("1")
    .cat(C::Stat)
    .range(0, 1);

pub const ZERO_BUFFERS: OptDef =
    opt("zero_buffers", K::Bool, "Fill write buffers with zeroes").cat(C::Io);

pub const REFILL_BUFFERS: OptDef = opt(
    "refill_buffers",
    K::Bool,
    "Refill write buffers with new data before every write",
)
.cat(C::Io);

pub const SCRAMBLE_BUFFERS: OptDef = opt(
    "scramble_buffers",
    K::Bool,
    "Change part of each write buffer so data does not repeat",
)
.def("1")
.cat(C::Io)
.range(0, 1);

pub const BUFFER_PATTERN: OptDef = opt(
    "buffer_pattern",
    K::Special,
    "Fill write buffers with this pattern (string or hex)",
)
.cat(C::Io);

pub const BUFFER_COMPRESS_PERCENTAGE: OptDef = opt(
    "buffer_compress_percentage",
    K::Int { min: 0, max: 100 },
    "Make write data compressible by about this much",
)
.cat(C::Io)
.range(0, 100);

pub const BUFFER_COMPRESS_CHUNK: OptDef = opt(
    "buffer_compress_chunk",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Size of the compressible pieces of write data",
)
.def("512")
.cat(C::Io)
.parent("buffer_compress_percentage")
.range(0, INT_MAX);

pub const DEDUPE_PERCENTAGE: OptDef = opt(
    "dedupe_percentage",
    K::Int { min: 0, max: 100 },
    "Make this share of writes duplicates of earlier ones",
)
.cat(C::Io)
.range(0, 100);

pub const DEDUPE_GLOBAL: OptDef = opt(
    "dedupe_global",
    K::Bool,
    "Share duplicate buffers between jobs",
)
.def("0")
.cat(C::Io)
.range(0, 1);

pub const DEDUPE_MODE: OptDef = opt(
    "dedupe_mode",
    K::Choice(DEDUPE_MODE_CHOICES),
    "How duplicate write buffers are chosen",
)
.def("repeat")
.cat(C::Io)
.parent("dedupe_percentage");

pub const DEDUPE_WORKING_SET_PERCENTAGE: OptDef = opt(
    "dedupe_working_set_percentage",
    K::Int { min: 0, max: 100 },
    "Share of the file that duplicate buffers are drawn from",
)
.def("5")
.cat(C::Io)
.parent("dedupe_percentage")
.range(0, 100);

pub const CLAT_PERCENTILES: OptDef = opt(
    "clat_percentiles",
    K::Bool,
    "Report completion latency percentiles",
)
.def("1")
.cat(C::Stat)
.range(0, 1);

pub const LAT_PERCENTILES: OptDef = opt(
    "lat_percentiles",
    K::Bool,
    "Report total latency percentiles",
)
.def("0")
.cat(C::Stat)
.range(0, 1);

pub const SLAT_PERCENTILES: OptDef = opt(
    "slat_percentiles",
    K::Bool,
    "Report submission latency percentiles",
)
.def("0")
.cat(C::Stat)
.range(0, 1);

pub const PERCENTILE_LIST: OptDef = opt(
    "percentile_list",
    K::FloatList,
    "Which percentiles to report, separated by ':'",
)
.def("1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99")
.cat(C::Stat)
.range(0, 100);

pub const SIGNIFICANT_FIGURES: OptDef = opt(
    "significant_figures",
    K::Int { min: 1, max: 10 },
    "Digits of precision in the normal report",
)
.def("4")
.cat(C::Stat)
.range(1, 10);

pub const DISK_UTIL: OptDef = opt("disk_util", K::Bool, "Report disk utilisation at the end")
    .def("1")
    .cat(C::Stat)
    .range(0, 1);

pub const GTOD_REDUCE: OptDef = opt(
    "gtod_reduce",
    K::Bool,
    "Measure time less often; turns off most latency statistics",
)
.def("0")
.cat(C::Stat)
.range(0, 1);

pub const DISABLE_LAT: OptDef = opt("disable_lat", K::Bool, "Do not measure total latency")
    .def("0")
    .cat(C::Stat)
    .parent("gtod_reduce")
    .range(0, 1);

pub const DISABLE_CLAT: OptDef = opt("disable_clat", K::Bool, "Do not measure completion latency")
    .def("0")
    .cat(C::Stat)
    .parent("gtod_reduce")
    .range(0, 1);

pub const DISABLE_SLAT: OptDef = opt("disable_slat", K::Bool, "Do not measure submission latency")
    .def("0")
    .cat(C::Stat)
    .parent("gtod_reduce")
    .range(0, 1);

pub const DISABLE_BW_MEASUREMENT: OptDef = opt(
    "disable_bw_measurement",
    K::Bool,
    "Do not measure bandwidth",
)
.alias(&["disable_bw"])
.def("0")
.cat(C::Stat)
.parent("gtod_reduce")
.range(0, 1);

pub const GTOD_CPU: OptDef = opt(
    "gtod_cpu",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Keep the time of day in a thread on this CPU",
)
.cat(C::Other)
.range(0, INT_MAX);

pub const UNIFIED_RW_REPORTING: OptDef = opt(
    "unified_rw_reporting",
    K::Choice(UNIFIED_RW_REPORTING_CHOICES),
    "Report reads, writes and trims together, apart, or both",
)
.def("none")
.cat(C::Other);

pub const CONTINUE_ON_ERROR: OptDef = opt(
    "continue_on_error",
    K::Choice(CONTINUE_ON_ERROR_CHOICES),
    "Keep going after these kinds of I/O errors",
)
.def("none")
.cat(C::Other);

pub const IGNORE_ERROR: OptDef = opt(
    "ignore_error",
    K::Special,
    "Error numbers to ignore, per direction",
)
.cat(C::Other)
.parent("rw");

pub const ERROR_DUMP: OptDef = opt("error_dump", K::Bool, "Print every I/O error")
    .def("0")
    .cat(C::Other)
    .range(0, 1);

pub const PROFILE: OptDef = opt(
    "profile",
    K::Choice(PROFILE_CHOICES),
    "A built-in profile; kept but without effect in a job, as in fio (run one with --profile)",
)
.cat(C::Profile);

pub const CGROUP: OptDef = opt("cgroup", K::Str, "Put the job in this control group").cat(C::Other);

pub const CGROUP_NODELETE: OptDef = opt(
    "cgroup_nodelete",
    K::Bool,
    "Keep the control group after the job",
)
.def("0")
.cat(C::Other)
.parent("cgroup")
.range(0, 1);

pub const CGROUP_WEIGHT: OptDef = opt(
    "cgroup_weight",
    K::Int {
        min: 100,
        max: 1000,
    },
    "The job's I/O weight in its control group",
)
.cat(C::Other)
.parent("cgroup")
.range(100, 1000);

pub const UID: OptDef = opt(
    "uid",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Run the job as this user id",
)
.cat(C::Other)
.range(0, INT_MAX);

pub const GID: OptDef = opt(
    "gid",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Run the job as this group id",
)
.cat(C::Other)
.range(0, INT_MAX);

pub const UNIT_BASE: OptDef = opt(
    "unit_base",
    K::Choice(UNIT_BASE_CHOICES),
    "Report in bytes (8) or bits (1); 0 picks automatically",
)
.cat(C::Other)
.prio(1);

pub const HUGEPAGE_SIZE: OptDef = opt(
    "hugepage-size",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "The huge page size used for huge page buffers",
)
.def("2097152")
.cat(C::Other)
.range(0, INT_MAX);

pub const FLOW_ID: OptDef = opt(
    "flow_id",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Jobs with the same id take part in the same flow control",
)
.def("0")
.cat(C::Io)
.range(0, INT_MAX);

pub const FLOW: OptDef = opt(
    "flow",
    // fio stores the weight unsigned, so a negative one wraps (see `run::flow`).
    K::Int {
        min: -1000,
        max: 1000,
    },
    "This job's weight in flow control",
)
.def("0")
.cat(C::Io)
.parent("flow_id")
.range(0, 1000);

pub const FLOW_WATERMARK: OptDef =
    opt("flow_watermark", K::Deprecated, "Obsolete; has no effect").cat(C::Io);

pub const FLOW_SLEEP: OptDef = opt(
    "flow_sleep",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Sleep this many usec when flow control holds the job back",
)
.def("0")
.cat(C::Io)
.parent("flow_id")
.range(0, INT_MAX);

pub const STEADYSTATE: OptDef = opt(
    "steadystate",
    K::Choice(STEADYSTATE_CHOICES),
    "Stop once this measure stays within this limit",
)
.alias(&["ss"])
.def("iops_slope:0.01%")
.cat(C::Other)
.later(&[("lat", F::V3_42), ("lat_slope", F::V3_42)]);

pub const STEADYSTATE_DURATION: OptDef = opt(
    "steadystate_duration",
    K::Time(TimeUnit::Sec),
    "How long the measure must stay steady",
)
.alias(&["ss_dur"])
.def("0")
.cat(C::Other)
.parent("steadystate");

pub const STEADYSTATE_RAMP_TIME: OptDef = opt(
    "steadystate_ramp_time",
    K::Time(TimeUnit::Sec),
    "Wait this long before judging steady state",
)
.alias(&["ss_ramp"])
.def("0")
.cat(C::Other)
.parent("steadystate");

// Options fio added after 3.33, each with the release that added it (fio's git history:
// `git log -S'"NAME"' -- options.c`, `git tag --contains`).

/// The NVMe placement options (FDP, streams) need a device with data placement.
const NEEDS_FDP: &str =
    "it needs an NVMe device with data placement (FDP or streams), which this host has not";
/// The zoned-device recovery options need a real zoned block device.
const NEEDS_ZBD: &str = "it needs a real zoned block device (zonemode=zbd here is emulated)";

pub const FDP: OptDef = opt("fdp", K::Bool, "Use Data placement directive (FDP)")
    .def("0")
    .cat(C::File)
    .since(F::V3_34)
    .not_yet_because(NEEDS_FDP);

pub const DATAPLACEMENT: OptDef = opt(
    "dataplacement",
    K::Choice(DATAPLACEMENT_CHOICES),
    "The data placement interface to use",
)
.alias(&["data_placement"])
.def("none")
.cat(C::File)
.since(F::V3_38)
.not_yet_because(NEEDS_FDP);

pub const PLIDS: OptDef = opt(
    "plids",
    K::Str,
    "Which data placement ids to use (all of them for FDP by default)",
)
.alias(&["fdp_pli"])
.cat(C::File)
.since(F::V3_38)
.later(&[("fdp_pli", F::V3_34)])
.not_yet_because(NEEDS_FDP);

pub const PLID_SELECT: OptDef = opt(
    "plid_select",
    K::Choice(PLID_SELECT_CHOICES),
    "How the next data placement id is picked",
)
.alias(&["fdp_pli_select"])
.def("roundrobin")
.cat(C::File)
.since(F::V3_38)
.later(&[("fdp_pli_select", F::V3_36)])
.not_yet_because(NEEDS_FDP);

pub const DP_SCHEME: OptDef = opt(
    "dp_scheme",
    K::Str,
    "A file mapping offset ranges to placement ids",
)
.cat(C::File)
.since(F::V3_38)
.not_yet_because(NEEDS_FDP);

pub const FILETYPE: OptDef = opt(
    "filetype",
    K::Choice(FILETYPE_CHOICES),
    "Take every file of the job to be of this type, without looking",
)
.def("none")
.cat(C::File)
.since(F::V3_41);

pub const NUM_RANGE: OptDef = opt(
    "num_range",
    K::Int { min: 0, max: 256 },
    "How many ranges one trim command carries",
)
.def("1")
.cat(C::Io)
.since(F::V3_37)
.not_yet_because(
    "io_uring_cmd sends one range a Dataset Management command; several are not implemented yet",
);

pub const SPRANDOM: OptDef = opt(
    "sprandom",
    K::Bool,
    "Precondition the device with SanDisk's pseudo random pattern",
)
.def("0")
.cat(C::Io)
.parent("rw")
.since(F::V3_41);

pub const SPR_OP: OptDef = opt(
    "spr_op",
    K::FloatList,
    "Over-provisioning ratio for sprandom",
)
.def("0.15")
.cat(C::Io)
.parent("sprandom")
.since(F::V3_41);

pub const SPR_NUM_REGIONS: OptDef = opt(
    "spr_num_regions",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "How many regions sprandom works in",
)
.def("100")
.cat(C::Io)
.parent("sprandom")
.since(F::V3_41);

pub const SPR_CS: OptDef = opt("spr_cs", K::Size, "The device's cache size for sprandom")
    .def("0")
    .cat(C::Io)
    .parent("sprandom")
    .since(F::V3_42);

pub const THINKCYCLES: OptDef = opt(
    "thinkcycles",
    K::Int {
        min: 0,
        max: u32::MAX as i64,
    },
    "Spin this many loop cycles between I/Os",
)
.def("0")
.cat(C::Io)
.parent("thinktime")
.since(F::V3_37);

pub const RAMP_SIZE: OptDef = opt(
    "ramp_size",
    K::Size,
    "Transfer this much before measuring starts",
)
.cat(C::Io)
.since(F::V3_42);

pub const END_SYNCFS: OptDef = opt(
    "end_syncfs",
    K::Bool,
    "Sync the file systems of the job's files when the job ends",
)
.def("0")
.cat(C::File)
.since(F::V3_42);

pub const COMM: OptDef = opt("comm", K::Str, "The job process's name (prctl PR_SET_NAME)")
    .cat(C::Other)
    .since(F::V3_42);

pub const JOB_START_CLOCK_ID: OptDef = opt(
    "job_start_clock_id",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "The clock whose time the JSON output's job_start gives",
)
.cat(C::Stat)
.since(F::V3_36);

pub const LOG_WINDOW_VALUE: OptDef = opt(
    "log_window_value",
    K::Choice(LOG_WINDOW_VALUE_CHOICES),
    "Log the average, the maximum or both of each window's samples",
)
.def("avg")
.cat(C::Log)
.since(F::V3_37);

pub const LOG_ISSUE_TIME: OptDef = opt(
    "log_issue_time",
    K::Bool,
    "Add each I/O's issue time to its log entry",
)
.def("0")
.cat(C::Log)
.since(F::V3_38);

pub const VERIFY_WRITE_SEQUENCE: OptDef = opt(
    "verify_write_sequence",
    K::Bool,
    "Check the write sequence number in verify headers",
)
.def("1")
.cat(C::Verify)
.parent("verify")
.since(F::V3_38);

pub const VERIFY_HEADER_SEED: OptDef = opt(
    "verify_header_seed",
    K::Bool,
    "Check the seed in verify headers",
)
.def("1")
.cat(C::Verify)
.parent("verify")
.since(F::V3_40);

pub const VERIFY_PATTERN_INTERVAL: OptDef = opt(
    "verify_pattern_interval",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "Start the verify pattern again every this many bytes",
)
.def("0")
.cat(C::Verify)
.parent("verify")
.since(F::V3_40);

pub const RECOVER_ZBD_WRITE_ERROR: OptDef = opt(
    "recover_zbd_write_error",
    K::Bool,
    "Keep writing a sequential zone after recovering from a write error",
)
.def("0")
.cat(C::Target)
.since(F::V3_40)
.not_yet_because(NEEDS_ZBD);

pub const WRITE_ZONE_REMAINDER: OptDef = opt(
    "write_zone_remainder",
    K::Bool,
    "Fill a zone's unaligned end by writing instead of finishing the zone",
)
.def("0")
.cat(C::Target)
.since(F::V3_42)
.not_yet_because(NEEDS_ZBD);

pub const STEADYSTATE_CHECK_INTERVAL: OptDef = opt(
    "steadystate_check_interval",
    K::Time(TimeUnit::Sec),
    "How often the steady-state measure is sampled",
)
.alias(&["ss_interval"])
.def("1")
.cat(C::Other)
.parent("steadystate")
.since(F::V3_35);

/// The definition answering to `name` (its name or an alias).
pub fn lookup(name: &str) -> Option<&'static OptDef> {
    OPTIONS
        .iter()
        .chain(PROFILE_OPTIONS)
        .find(|o| o.answers_to(name))
}

/// The options fio's built-in `tiobench` profile adds to every job's option set. fio accepts
/// them in any job (its own `examples/waitfor.fio` sets `threads=1`) and they change nothing
/// unless `profile=tiobench` is given, so iobench accepts them the same way. fio's
/// `--cmdhelp` does not list them, so they stay out of [`OPTIONS`].
pub static PROFILE_OPTIONS: &[OptDef] = &[THREADS, BLOCK, NUMRUNS, DIR];

pub const THREADS: OptDef = opt(
    "threads",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "tiobench profile: threads per job",
)
.cat(C::Profile);

pub const BLOCK: OptDef = opt(
    "block",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "tiobench profile: block size in bytes",
)
.def("4096")
.cat(C::Profile);

pub const NUMRUNS: OptDef = opt(
    "numruns",
    K::Int {
        min: 0,
        max: INT_MAX,
    },
    "tiobench profile: number of runs",
)
.cat(C::Profile);

pub const DIR: OptDef =
    opt("dir", K::Str, "tiobench profile: the directory to test in").cat(C::Profile);

/// Engine names fio 3.33 can load that are not among the engine declarations (built only
/// with optional libraries or hardware), so `ioengine=` names them as "not supported yet"
/// rather than unknown.
pub static OTHER_ENGINE_NAMES: &[&str] = &[
    "cpp_null",
    "dfs",
    "ime_aio",
    "ime_psync",
    "ime_psyncv",
    "libcufile",
    "libhdfs",
    "libiscsi",
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    "libzbc",
    "nfs",
    "solarisaio",
    "windowsaio",
    "xnvme",
];

/// The known option name closest to `name`, for "did you mean" hints.
pub fn nearest(name: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .filter(|n| *n != name)
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, n)| *d <= 3.max(n.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}
