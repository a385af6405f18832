//! I/O generation: which direction, file, offset and length each next I/O has. The worker
//! asks [`Generator::next_io`] once per I/O; it must not allocate or lock.

use crate::error::JobError;
use crate::job::{Ddir, Job, SizeSpec};

/// The part of one file a job clone works on, computed by the runner from the file's real
/// size before the generator is made.
#[derive(Debug, Clone, Copy)]
pub struct FileExtent {
    /// The file's (or device's) size in bytes.
    pub real_size: u64,
}

/// The next I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextIo {
    pub ddir: Ddir,
    /// Index into the job's file list.
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// Produces the I/O sequence of one job clone.
#[derive(Debug)]
pub struct Generator {
    ddir: Ddir,
    random: bool,
    bs: u64,
    start: u64,
    blocks: u64,
    issued: u64,
    rng: u64,
}

impl Generator {
    /// Makes the generator for clone `clone_index` (0-based) of `job` over `files`.
    pub fn new(job: &Job, clone_index: u32, files: &[FileExtent]) -> Result<Self, JobError> {
        let _ = clone_index;
        let w = &job.workload;
        let ddir = if w.pattern.writes() {
            Ddir::Write
        } else {
            Ddir::Read
        };
        let real = files.first().map(|f| f.real_size).unwrap_or(0);
        let start = match w.offset {
            SizeSpec::Bytes(b) => b,
            SizeSpec::Percent(p) => (real as f64 * p / 100.0) as u64,
        };
        let size = match w.size {
            Some(SizeSpec::Bytes(b)) => b,
            Some(SizeSpec::Percent(p)) => (real as f64 * p / 100.0) as u64,
            None => real.saturating_sub(start),
        };
        let bs = w.bs[ddir as usize].0.max(1);
        Ok(Generator {
            ddir,
            random: w.pattern.is_random(),
            bs,
            start,
            blocks: size / bs,
            issued: 0,
            rng: 0x2545_f491_4f6c_dd1d,
        })
    }

    /// The next I/O, or `None` when the job's amount of I/O for this pass is done.
    pub fn next_io(&mut self) -> Option<NextIo> {
        if self.issued >= self.blocks {
            return None;
        }
        let block = if self.random {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng % self.blocks
        } else {
            self.issued
        };
        self.issued += 1;
        Some(NextIo {
            ddir: self.ddir,
            file: 0,
            offset: self.start + block * self.bs,
            len: self.bs,
        })
    }

    /// Starts a new pass over the same region (time_based jobs, loops).
    pub fn restart(&mut self) {
        self.issued = 0;
    }
}
