//! The RESOLVED stage: a [`Job`] has every value typed and in bytes, microseconds and counts,
//! with defaults applied, so the run core never looks at option text.

pub mod buffers;
pub mod errors;
pub mod exec;
pub mod files;
pub mod numa;
pub mod reportopts;
pub mod verifyopts;
pub mod workload;

use crate::defs::raw::RawJob;
use crate::defs::reader::Reader;
use crate::defs::value::KbBase;
use crate::defs::value::SizeSpec;
use crate::defs::{Ddir, Pattern};
use crate::error::JobError;
use crate::options::table::{BLOCK_ERROR_PERCENTILES, OFFSET, UNIT_BASE, VERIFY};

/// One runnable job: a section after `[global]` folding and defaults, with every value typed.
/// Each concern's options live in their own struct, resolved by their own module.
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    pub kb_base: KbBase,
    /// What I/O to issue: pattern, block sizes, offsets, amounts, randomness.
    pub workload: workload::Workload,
    /// How to issue it: engine, depth, workers, timing, groups.
    pub exec: exec::ExecOpts,
    /// Where: files, directories, devices.
    pub files: files::FileOpts,
    /// Verify method and options (`verify=`, `verify_*`).
    pub verify: crate::job::verifyopts::VerifyOpts,
    /// What write buffers hold (`zero_buffers`, `buffer_compress_percentage`, dedupe …).
    pub buffers: crate::job::buffers::BufferOpts,
    /// What to report and log.
    pub report: reportopts::ReportOpts,
    /// The raw options, for `--showcmd` and for messages.
    pub raw: RawJob,
}

/// The reporting group of each job, as fio numbers them: a job with `stonewall` or
/// `new_group` starts a new group unless it is the first.
pub fn group_ids(jobs: &[Job]) -> Vec<u32> {
    let mut gid = 0u32;
    let mut in_group = 0usize;
    jobs.iter()
        .map(|j| {
            if (j.exec.stonewall || j.exec.new_group) && in_group > 0 {
                in_group = 0;
                gid += 1;
            }
            in_group += j.exec.numjobs.max(1) as usize;
            gid
        })
        .collect()
}

/// Resolves one raw job into a typed job.
pub fn resolve(raw: &RawJob) -> Result<Job, JobError> {
    let r = Reader::new(raw);
    let workload = workload::Workload::resolve(&r)?;
    let verify = crate::job::verifyopts::VerifyOpts::resolve(&r, &workload)?;
    if workload.zbd.is_some() && verify.on() {
        // fio replays a zone's writes in order for the verify pass and resets zones
        // before writing; iobench does not do that yet.
        return Err(r.invalid(
            &VERIFY,
            "verify with zonemode=zbd is not supported yet (use verify=0)",
        ));
    }
    let buffers = crate::job::buffers::BufferOpts::resolve(
        &r,
        verify.on(),
        matches!(
            workload.pattern,
            Pattern::Read | Pattern::RandRead | Pattern::ReadWrite | Pattern::RandRw
        ),
    )?;
    if let (SizeSpec::Bytes(o), Some(SizeSpec::Bytes(sz))) = (workload.offset, workload.size) {
        if o > i64::MAX as u64 || o.checked_add(sz).is_none_or(|end| end > i64::MAX as u64) {
            return Err(r.invalid(
                &OFFSET,
                format!("{o} with size={sz}: the end of the region is past 2^63 bytes"),
            ));
        }
    } else if let SizeSpec::Bytes(o) = workload.offset {
        if o > i64::MAX as u64 {
            return Err(r.invalid(&OFFSET, format!("{o}: larger than 2^63 bytes")));
        }
    }
    let mut job = Job {
        name: raw.name.clone(),
        kb_base: r.kb_base(),
        verify,
        buffers,
        workload,
        exec: exec::ExecOpts::resolve(&r)?,
        files: files::FileOpts::resolve(&r)?,
        report: reportopts::ReportOpts::resolve(&r)?,
        raw: raw.clone(),
    };
    if job.report.block_error_percentiles {
        check_block_table(&r, &job)?;
    }
    // Open-loop arrivals keep the latency from the scheduled start too.
    job.report.stats.sched_lat = job.exec.rate.open_loop;
    // fio's net engine reports in bits unless unit_base says otherwise.
    if job.exec.engine.flags().bit_based && matches!(raw.value(&UNIT_BASE), None | Some("0")) {
        job.report.stats.bits = true;
    }
    if job.exec.engine.flags().no_io {
        // An engine that does pseudo I/O (cpuio) picks no offsets and needs no size, as in
        // fio: one endless sequential read of one fake file, each unit its own work.
        job.workload.pattern = Pattern::Read;
        job.workload.size = Some(SizeSpec::Bytes(1 << 60));
        job.workload.io_size = None;
        job.files.nrfiles = 1;
    }
    Ok(job)
}

/// `block_error_percentiles` keeps one table for one file, of at most 8192 trim blocks,
/// as in fio (which refuses the same jobs, the size only when the job starts).
fn check_block_table(r: &Reader, job: &Job) -> Result<(), JobError> {
    let names = job
        .files
        .filename
        .as_deref()
        .map_or(1, |f| files::split_names(f).len().max(1));
    let nfiles = if job.files.filename.is_some() {
        names
    } else {
        job.files.nrfiles as usize
    };
    if nfiles != 1 {
        return Err(r.invalid(
            &BLOCK_ERROR_PERCENTILES,
            format!("needs a single file per job, but {nfiles} files are given"),
        ));
    }
    if let Some(SizeSpec::Bytes(size)) = job.workload.size {
        let bs = job.workload.bs[Ddir::Trim as usize].0;
        block_count(size, bs).map_err(|e| r.invalid(&BLOCK_ERROR_PERCENTILES, e))?;
    }
    Ok(())
}

/// The most blocks fio tracks (its `MAX_NR_BLOCK_INFOS`); a larger file is refused.
pub const MAX_BLOCKS: u64 = 8192;

/// The blocks `block_error_percentiles` tracks in `io_size` bytes of blocks of `bs`, or
/// why fio would refuse it (no block, or more than [`MAX_BLOCKS`]).
pub fn block_count(io_size: u64, bs: u64) -> Result<u64, String> {
    let n = io_size.checked_div(bs).unwrap_or(0);
    if n == 0 || n > MAX_BLOCKS {
        return Err(format!(
            "cannot track {n} trim blocks ({io_size} bytes in blocks of {bs}); \
             between 1 and {MAX_BLOCKS} are possible"
        ));
    }
    Ok(n)
}
