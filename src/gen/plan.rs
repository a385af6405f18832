//! Each file's region for one job clone: where I/O starts (`offset`, `offset_increment`,
//! `offset_align`) and how many bytes it covers (`size` split over the files, `size=N%`,
//! `io_size=N%`), as fio's file setup computes them. The runner uses [`layout_size`] to
//! know how large to make a file before the generator is built.

use super::FileExtent;
use crate::defs::value::SizeSpec;
use crate::job::Job;

/// One file's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte of the region.
    pub start: u64,
    /// Bytes the region covers.
    pub io_size: u64,
    /// `io_size` after `io_size=N%`, which counts toward the job's total.
    pub io_size_scaled: u64,
}

/// The smallest block size over all directions.
fn min_bs(job: &Job) -> u64 {
    job.workload
        .bs
        .iter()
        .map(|b| b.0)
        .min()
        .unwrap_or(4096)
        .max(1)
}

/// fio's `get_start_offset`: `offset` (bytes or % of the file) plus the clone's
/// `offset_increment`, rounded up to `offset_align` when a percentage is involved.
pub fn start_offset(job: &Job, clone_index: u32, real_size: u64) -> u64 {
    let w = &job.workload;
    let mut align = false;
    let increment = match w.offset_increment {
        Some(SizeSpec::Percent(p)) => {
            align = true;
            (p as u64).saturating_mul(real_size) / 100
        }
        Some(SizeSpec::Bytes(b)) => b,
        None => 0,
    };
    let step = (clone_index as u64).saturating_mul(increment);
    let offset = match w.offset {
        SizeSpec::Percent(p) if p > 0.0 => {
            align = true;
            (real_size.saturating_mul(p as u64) / 100).saturating_add(step)
        }
        SizeSpec::Percent(_) => step,
        SizeSpec::Bytes(b) => b.saturating_add(step),
    };
    if !align {
        return offset;
    }
    let a = w.offset_align.unwrap_or_else(|| min_bs(job)).max(1);
    offset.div_ceil(a).saturating_mul(a)
}

/// Every file's region, planned from the files' sizes before layout. A file that did not
/// exist counts as empty, except that the null engine's count as `size / nrfiles`.
pub fn file_regions(job: &Job, clone_index: u32, files: &[FileExtent]) -> Vec<Region> {
    let w = &job.workload;
    let bs = min_bs(job);
    let nr = files.len().max(1) as u64;
    let size = match w.size {
        Some(SizeSpec::Bytes(b)) => b,
        _ => 0,
    };
    let fixed_filesize = job.files.filesize.is_some();
    let null = job.exec.engine.flags().fake_files;
    let (per_file, mut extra) = if size != 0 && !fixed_filesize {
        let fs = size / nr;
        (fs, (size - fs * nr) / bs)
    } else {
        (0, 0)
    };
    files
        .iter()
        .map(|f| {
            // A file that does not exist yet has size 0 here, so a percentage offset
            // starts it at 0, as in fio (whose offsets come before layout); the null
            // engine's files count as `size / nrfiles`.
            let real = if f.setup_size == 0 && size != 0 && null {
                size / nr
            } else {
                f.setup_size
            };
            // file_append: I/O starts where the regular file ends (fio ignores it on devices).
            let start = if job.files.file_append && !f.device {
                f.setup_size
            } else {
                start_offset(job, clone_index, real)
            };
            // With filesize, fio's region runs from the start (planned from the size the
            // file had before layout) to the planned size.
            let mut io_size = if fixed_filesize {
                let end = if f.planned != 0 { f.planned } else { real };
                end.saturating_sub(start)
            } else {
                let mut s = per_file;
                if extra > 0 {
                    extra -= 1;
                    s += bs;
                }
                if s == 0 {
                    s = real.saturating_sub(start);
                }
                s
            };
            if let Some(SizeSpec::Percent(p)) = w.size {
                if p != 100.0 {
                    let file_size = io_size + start;
                    io_size = (file_size as f64 * p / 100.0) as u64;
                    io_size = io_size.min(file_size - start);
                    io_size -= io_size % bs;
                }
            }
            let io_size_scaled = match w.io_size {
                Some(SizeSpec::Percent(p)) if p != 100.0 => (io_size as f64 * p / 100.0) as u64,
                _ => io_size,
            };
            Region {
                start,
                io_size,
                io_size_scaled,
            }
        })
        .collect()
}

/// How large each file must be for this clone's I/O (`offset + io_size`), given the sizes
/// the files have now (0 for a file that does not exist yet). The runner extends a
/// regular file that is smaller.
pub fn layout_size(job: &Job, clone_index: u32, current_sizes: &[u64]) -> Vec<u64> {
    layout_size_planned(job, clone_index, current_sizes, &[])
}

/// [`layout_size`] with `filesize`'s planned size of each file (`planned[i]`, or none
/// when `planned` is shorter). As in fio, a file is extended to its region's end, not to
/// the planned size: with `size=N%` a job lays out only the part it uses, so a later job
/// with a larger offset extends the file again, from the size it then has.
pub fn layout_size_planned(
    job: &Job,
    clone_index: u32,
    current_sizes: &[u64],
    planned: &[u64],
) -> Vec<u64> {
    let extents: Vec<FileExtent> = current_sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| FileExtent {
            real_size: s,
            name_hash: 0,
            setup_size: s,
            device: false,
            planned: planned.get(i).copied().unwrap_or(0),
            zones: None,
        })
        .collect();
    file_regions(job, clone_index, &extents)
        .iter()
        .zip(current_sizes)
        .map(|(r, &cur)| cur.max(r.start + r.io_size))
        .collect()
}
