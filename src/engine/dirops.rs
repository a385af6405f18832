//! dircreate, dirstat and dirdelete (fio 3.37 and later): the directory counterparts of
//! the file engines in `fileops.rs`. Each job file name is a directory; the timed call,
//! made once per directory per pass when the pass first reaches it, is mkdir, a stat call
//! (`stat_type`) or rmdir. As fio does, dirstat and dirdelete first make any missing
//! directory (mode 0700) when the job starts, and dircreate's mkdir asks for no
//! permission bits (fio passes `S_IFDIR` as the mode, which the kernel masks to 0000).
//! Accounting is the file engines': bytes and I/Os only, the call's latency as the clat
//! sample.

use super::fileops::{StatType, STATX_ALL, STAT_TYPE};
use super::spec::{Flags, JobFacts, Spec};
use super::{Engine, IoUnit, Queued, Setup};
use crate::defs::reader::Reader;
use crate::error::JobError;
use std::ffi::CString;
use std::io;

/// The operation a directory engine performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirOp {
    Create,
    Stat(StatType),
    Delete,
}

impl DirOp {
    /// The call's name in error messages, as fio names it (the file engines' names).
    fn name(self) -> &'static str {
        match self {
            DirOp::Create => "open",
            DirOp::Stat(_) => "stat",
            DirOp::Delete => "delete",
        }
    }
}

/// The directory-operation engine.
#[derive(Debug)]
pub struct DirOps {
    op: DirOp,
    paths: Vec<CString>,
    /// Room for the resolved path statx is timed with (as fio resolves it first).
    resolved: Vec<libc::c_char>,
    /// The pass each directory was last operated on in (`u32::MAX`: never).
    done_in_pass: Vec<u32>,
    last_ns: Option<u64>,
}

impl DirOps {
    pub fn new(op: DirOp) -> Self {
        DirOps {
            op,
            paths: Vec::new(),
            resolved: Vec::new(),
            done_in_pass: Vec::new(),
            last_ns: None,
        }
    }

    /// Makes the timed call on directory `i`; returns 0 or a negative errno.
    fn call(&mut self, i: usize) -> i64 {
        let p = self.paths[i].as_ptr();
        let resolved = self.resolved.as_mut_ptr();
        // SAFETY: `p` is a NUL-terminated path owned by `self`; `resolved` has PATH_MAX + 1
        // bytes, as realpath needs; the stat buffers are locals the calls fill.
        let r = unsafe {
            match self.op {
                DirOp::Create => libc::mkdir(p, 0),
                DirOp::Stat(StatType::Stat) => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::stat(p, &mut st)
                }
                DirOp::Stat(StatType::Lstat) => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::lstat(p, &mut st)
                }
                DirOp::Stat(StatType::Statx) => {
                    let mut st: libc::statx = std::mem::zeroed();
                    if libc::realpath(p, resolved).is_null() {
                        -1
                    } else {
                        libc::statx(libc::AT_FDCWD, resolved, 0, STATX_ALL, &mut st)
                    }
                }
                DirOp::Delete => libc::rmdir(p),
            }
        };
        super::neg_errno(r as isize)
    }
}

impl Engine for DirOps {
    fn setup(&mut self, s: &Setup<'_>) -> io::Result<()> {
        self.paths = s
            .names
            .iter()
            .map(|n| {
                if n == "-" {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "the directory engines cannot use stdin/stdout ('-')",
                    ));
                }
                CString::new(n.as_bytes()).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("directory name '{n}' contains a NUL byte"),
                    )
                })
            })
            .collect::<io::Result<_>>()?;
        if self.op != DirOp::Create {
            // dirstat and dirdelete work on directories that exist: make the missing ones.
            for (p, n) in self.paths.iter().zip(s.names) {
                // SAFETY: `p` is a NUL-terminated path owned by `self`.
                if unsafe { libc::mkdir(p.as_ptr(), 0o700) } != 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(io::Error::new(
                            e.kind(),
                            format!("create directory {n} failed: {e}"),
                        ));
                    }
                }
            }
        }
        self.resolved = vec![0; libc::PATH_MAX as usize + 1];
        self.done_in_pass = vec![u32::MAX; self.paths.len()];
        Ok(())
    }

    #[inline]
    unsafe fn queue(&mut self, io: &mut IoUnit) -> io::Result<Queued> {
        if let super::Op::Sync { .. } = io.op {
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

/// The directory engines' flags: diskless (fio's FIO_DISKLESSIO for all three), their own
/// calls on names, timed inside the engine.
const DIR_FLAGS: Flags = Flags {
    diskless: true,
    opens_own_files: true,
    no_offload: true,
    file_ops: true,
    dir_ops: true,
    ..Flags::SYNC
};

impl super::spec::Declared for DirOps {
    type Opts = DirOp;
    const SPECS: &'static [Spec] = &[
        Spec::new(
            "dircreate",
            "times creating directories",
            Flags {
                creates_files: true,
                ..DIR_FLAGS
            },
        )
        .hidden(),
        Spec::new("dirstat", "times stat calls on directories", DIR_FLAGS)
            .options(&[STAT_TYPE])
            .hidden(),
        Spec::new(
            "dirdelete",
            "times deleting directories",
            Flags {
                syncfs: true,
                ..DIR_FLAGS
            },
        )
        .hidden(),
    ];
    fn configure(spec: &'static Spec, r: &Reader, _: &JobFacts) -> Result<DirOp, JobError> {
        Ok(match spec.name {
            "dircreate" => DirOp::Create,
            "dirdelete" => DirOp::Delete,
            _ => DirOp::Stat(match r.text(&STAT_TYPE) {
                Some(v) => StatType::parse(&v).map_err(|e| r.invalid(&STAT_TYPE, e))?,
                None => StatType::default(),
            }),
        })
    }
    fn build(op: &DirOp) -> Self {
        DirOps::new(*op)
    }
}
