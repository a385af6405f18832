//! The runner: opens and lays out files, builds each job clone's engine and generator, and
//! runs the worker loop (`worker`), collecting each clone's stats.

pub mod worker;

use crate::engine::registry::EngineVisitor;
use crate::engine::{Engine, EngineFile};
use crate::error::RunError;
use crate::job::{Job, SizeSpec};
use crate::stats::JobStats;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};

static TERMINATE: AtomicBool = AtomicBool::new(false);

/// True once a stop was asked for (signal): workers end their loops promptly.
#[inline]
pub fn terminating() -> bool {
    TERMINATE.load(Ordering::Relaxed)
}

/// Asks every worker to stop.
pub fn request_stop() {
    TERMINATE.store(true, Ordering::Relaxed);
}

struct Visit<'a> {
    cx: worker::WorkerCtx<'a>,
}

impl EngineVisitor for Visit<'_> {
    type Out = std::io::Result<JobStats>;
    fn visit<E: Engine>(self, engine: E) -> Self::Out {
        worker::run(engine, self.cx)
    }
}

/// Runs one clone of a job (for now: one file per clone, `jobname.clone.0` or `filename`).
pub fn run_clone(job: &Job, clone: u32, groupid: u32) -> Result<JobStats, RunError> {
    let err = |source| RunError::Io {
        job: job.name.clone(),
        source,
    };
    let path = match (&job.files.directory, &job.files.filename) {
        (Some(d), Some(f)) => format!("{d}/{f}"),
        (None, Some(f)) => f.clone(),
        (Some(d), None) => format!("{d}/{}.{clone}.0", job.name),
        (None, None) => format!("{}.{clone}.0", job.name),
    };
    let size = match job.workload.size {
        Some(SizeSpec::Bytes(b)) => b,
        _ => {
            return Err(RunError::Setup {
                job: job.name.clone(),
                message: "size must be given in bytes for now".into(),
            })
        }
    };
    let mut flags = job.exec.sync.open_sync_flags;
    if job.exec.direct {
        flags |= libc::O_DIRECT;
    }
    let no_files = job.exec.engine == crate::engine::EngineKind::Null;
    let (file, real) = if no_files {
        (None, size)
    } else {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(flags)
            .open(&path)
            .map_err(err)?;
        if file.metadata().map_err(err)?.len() < size {
            file.set_len(size).map_err(err)?;
        }
        (Some(file), size)
    };
    let fd = file.as_ref().map_or(-1, |f| f.as_raw_fd());
    let fds = [fd];
    let efiles = [EngineFile {
        fd,
        size: real,
        writable: true,
    }];
    let extents = [crate::gen::FileExtent::new(&path, real)];
    let gen = crate::gen::Generator::new(job, clone, &extents).map_err(|e| RunError::Setup {
        job: job.name.clone(),
        message: e.to_string(),
    })?;
    let mut stats = JobStats::for_job(job, 0, groupid);
    stats.pid = std::process::id();
    let cx = worker::WorkerCtx {
        job,
        fds: &fds,
        files: &efiles,
        names: std::slice::from_ref(&path),
        gen,
        stats,
    };
    let ru_start = crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread);
    let r = job
        .exec
        .engine
        .visit(&job.exec.engine_opts, Visit { cx })
        .map_err(err);
    drop(file);
    r.map(|mut s| {
        s.set_cpu(crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Thread).since(&ru_start));
        s
    })
}

/// Runs every clone of one job in turn (processes and groups come next).
pub fn run_job(job: &Job, groupid: u32) -> Result<Vec<JobStats>, RunError> {
    (0..job.exec.numjobs)
        .map(|c| run_clone(job, c, groupid))
        .collect()
}
