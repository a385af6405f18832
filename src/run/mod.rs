//! The runner: lays out files, starts workers group by group, and collects their stats.

use crate::engine::psync::Psync;
use crate::engine::{Engine, IoUnit};
use crate::error::RunError;
use crate::job::{Ddir, Job, SizeSpec};
use crate::stats::JobStats;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::Instant;

/// Runs one job to completion with the psync engine (the first end-to-end path).
pub fn run_job(job: &Job, groupid: u32) -> Result<JobStats, RunError> {
    let err = |source| RunError::Io {
        job: job.name.clone(),
        source,
    };
    let path = match (&job.files.directory, &job.files.filename) {
        (Some(d), Some(f)) => format!("{d}/{f}"),
        (None, Some(f)) => f.clone(),
        (Some(d), None) => format!("{d}/{}.0.0", job.name),
        (None, None) => format!("{}.0.0", job.name),
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
    let mut flags = 0;
    if job.exec.direct {
        flags |= libc::O_DIRECT;
    }
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
    let bs = job.workload.bs[0].0 as usize;
    let layout = std::alloc::Layout::from_size_align(bs, 4096).expect("bs is non-zero");
    // SAFETY: layout has non-zero size; the buffer is freed below with the same layout.
    let buf = unsafe { std::alloc::alloc_zeroed(layout) };
    let ddir = if job.workload.pattern.writes() {
        Ddir::Write
    } else {
        Ddir::Read
    };
    let mut engine = Psync;
    let mut stats = JobStats::for_job(job, 0, groupid);
    let ru_start = crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Process);
    let start = Instant::now();
    let extents = [crate::gen::FileExtent::new(&path, size)];
    let mut gen = crate::gen::Generator::new(job, 0, &extents).map_err(|e| RunError::Setup {
        job: job.name.clone(),
        message: e.to_string(),
    })?;
    while let Some(next) = gen.next_io() {
        let mut io = IoUnit {
            ddir: next.ddir,
            fd: file.as_raw_fd(),
            offset: next.offset,
            len: next.len as usize,
            buf,
            result: 0,
        };
        let t0 = Instant::now();
        engine.queue(&mut io).map_err(err)?;
        let clat = t0.elapsed().as_nanos() as u64;
        if io.result < 0 {
            stats.error = (-io.result) as i32;
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        stats.record_depth(1, 1);
        stats.record_submit(1);
        stats.record_complete(1);
        stats.record_io_at(next.ddir, io.result as u64, next.offset, 0, clat, now);
    }
    for d in Ddir::ALL {
        if stats.dir[d as usize].bytes > 0 || d == ddir {
            stats.set_runtime_ms(d, start.elapsed().as_millis().max(1) as u64);
        }
    }
    stats.set_total_runtime_ms(start.elapsed().as_millis() as u64);
    stats
        .set_cpu(crate::stats::cpu::Rusage::take(crate::stats::cpu::Who::Process).since(&ru_start));
    // SAFETY: `buf` came from `alloc_zeroed` with this layout and is no longer used.
    unsafe { std::alloc::dealloc(buf, layout) };
    Ok(stats)
}
