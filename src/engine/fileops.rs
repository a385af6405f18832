//! filecreate, filestat and filedelete: engines whose measured operation is a file system
//! call on each file (create, stat or unlink), not data transfer. As in fio, the call is
//! made once per file per pass, when the pass first reaches the file (where another engine
//! would open it); the I/O units themselves complete at once and count as bytes and I/Os
//! only. The call's latency is the clat sample of the job's direction (read unless the job
//! only writes), and nothing else is sampled per I/O.

use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Queued, Setup};
use crate::defs::reader::Reader;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;
use std::ffi::CString;
use std::io;

/// Which stat call filestat times (`stat_type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

impl StatType {
    /// Reads a `stat_type=` value (the option table has already checked the word).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stat" => Ok(StatType::Stat),
            "lstat" => Ok(StatType::Lstat),
            "statx" => Ok(StatType::Statx),
            other => Err(format!(
                "'{other}' is not a stat type (expected stat, lstat or statx)"
            )),
        }
    }
}

/// The operation a file engine performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Create,
    Stat(StatType),
    Delete,
}

impl FileOp {
    /// The call's name, for error messages (as fio names it in its own).
    fn name(self) -> &'static str {
        match self {
            FileOp::Create => "open",
            FileOp::Stat(_) => "stat",
            FileOp::Delete => "delete",
        }
    }
}

/// `statx`'s "every field" mask (STATX_ALL: basic stats and birth time).
pub(crate) const STATX_ALL: u32 = 0x0fff;

/// The file-operation engine.
#[derive(Debug)]
pub struct FileOps {
    op: FileOp,
    /// Each file's name as given to the job.
    paths: Vec<CString>,
    /// Room for a resolved path: statx is timed with the `realpath` fio makes before it.
    resolved: Vec<libc::c_char>,
    /// The pass each file was last operated on in (`u32::MAX`: never).
    done_in_pass: Vec<u32>,
    /// The latency of the call the last `queue` made, until taken.
    last_ns: Option<u64>,
}

impl FileOps {
    pub fn new(op: FileOp) -> Self {
        FileOps {
            op,
            paths: Vec::new(),
            resolved: Vec::new(),
            done_in_pass: Vec::new(),
            last_ns: None,
        }
    }

    /// Makes the call on file `i`; returns 0 or a negative errno.
    fn call(&mut self, i: usize) -> i64 {
        let p = self.paths[i].as_ptr();
        let resolved = self.resolved.as_mut_ptr();
        // SAFETY: `p` is a NUL-terminated path owned by `self`; `resolved` has PATH_MAX
        // bytes, as realpath needs; every other out-buffer is a local the call fills; the
        // descriptor filecreate gets is closed right away.
        let r = unsafe {
            match self.op {
                FileOp::Create => {
                    let fd = libc::open(p, libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC, 0o600);
                    if fd >= 0 {
                        libc::close(fd);
                        0
                    } else {
                        -1
                    }
                }
                FileOp::Stat(StatType::Stat) => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::stat(p, &mut st)
                }
                FileOp::Stat(StatType::Lstat) => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::lstat(p, &mut st)
                }
                FileOp::Stat(StatType::Statx) => {
                    let mut st: libc::statx = std::mem::zeroed();
                    if libc::realpath(p, resolved).is_null() {
                        -1
                    } else {
                        libc::statx(libc::AT_FDCWD, resolved, 0, STATX_ALL, &mut st)
                    }
                }
                FileOp::Delete => libc::unlink(p),
            }
        };
        super::neg_errno(r as isize)
    }
}

impl Engine for FileOps {
    fn setup(&mut self, s: &Setup<'_>) -> io::Result<()> {
        let bad = |n: &str| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("file name '{n}' contains a NUL byte"),
            )
        };
        self.paths = s
            .names
            .iter()
            .map(|n| {
                if n == "-" {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "the file engines cannot use stdin/stdout ('-')",
                    ));
                }
                CString::new(n.as_bytes()).map_err(|_| bad(n))
            })
            .collect::<io::Result<_>>()?;
        self.resolved = vec![0; libc::PATH_MAX as usize + 1];
        self.done_in_pass = vec![u32::MAX; self.paths.len()];
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if let super::Op::Sync { .. } = io.op {
            // No data was written through a descriptor: nothing to sync.
            io.result = 0;
            return Ok(Queued::Completed);
        }
        let f = io.file as usize;
        io.result = io.len as i64;
        if let Some(seen) = self.done_in_pass.get_mut(f) {
            if *seen != io.pass {
                *seen = io.pass;
                let t = crate::clock::now_ns();
                let r = self.call(f);
                let ns = crate::clock::now_ns().saturating_sub(t);
                if r < 0 {
                    io.result = r;
                } else {
                    self.last_ns = Some(ns);
                }
            }
        }
        Ok(Queued::Completed)
    }

    fn take_op_latency(&mut self) -> Option<u64> {
        self.last_ns.take()
    }

    fn op_name(&self) -> &'static str {
        self.op.name()
    }
}

const STAT_TYPE_CHOICES: &[(&str, &str)] = &[
    ("stat", "time stat(2), which follows symbolic links"),
    ("lstat", "time lstat(2), which does not follow a final link"),
    ("statx", "time statx(2) asking for every field"),
];

pub const STAT_TYPE: OptDef = opt(
    "stat_type",
    K::Choice(STAT_TYPE_CHOICES),
    "Which stat call to time",
)
.def("stat")
.cat(C::Engine)
.engines(&["filestat", "dirstat"]);

/// The file engines' flags: each times its own call on file names, so the runner opens
/// nothing and offload submitters could not time it.
const FILE_FLAGS: Flags = Flags {
    opens_own_files: true,
    no_offload: true,
    file_ops: true,
    ..Flags::SYNC
};

impl super::spec::Declared for FileOps {
    type Opts = FileOp;
    const SPECS: &'static [Spec] = &[
        Spec::new(
            "filecreate",
            "times creating files",
            Flags {
                diskless: true,
                creates_files: true,
                syncfs: true,
                ..FILE_FLAGS
            },
        ),
        Spec::new("filestat", "times stat calls on files", FILE_FLAGS)
            .options(&[STAT_TYPE])
            .hidden(),
        Spec::new(
            "filedelete",
            "times deleting files",
            Flags {
                syncfs: true,
                ..FILE_FLAGS
            },
        )
        .hidden(),
    ];
    fn configure(spec: &'static Spec, r: &Reader, _: &JobFacts) -> Result<FileOp, JobError> {
        Ok(match spec.name {
            "filecreate" => FileOp::Create,
            "filedelete" => FileOp::Delete,
            _ => FileOp::Stat(match r.text(&STAT_TYPE) {
                Some(v) => StatType::parse(&v).map_err(|e| r.invalid(&STAT_TYPE, e))?,
                None => StatType::default(),
            }),
        })
    }
    fn build(op: &FileOp) -> Self {
        FileOps::new(*op)
    }
}
