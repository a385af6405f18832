//! A job's buffer options: what write buffers hold (`buffer_pattern`, compression, dedupe,
//! refills) and where they live (`iomem`, `iomem_align`, `hugepage-size`). The filling
//! and the memory itself are `buffer`'s.

use crate::defs::datapattern::DataPattern;
use crate::defs::reader::Reader;
use crate::defs::OptDef;
use crate::error::JobError;
use crate::options::table::{
    BUFFER_COMPRESS_CHUNK, BUFFER_COMPRESS_PERCENTAGE, BUFFER_PATTERN, DEDUPE_GLOBAL, DEDUPE_MODE,
    DEDUPE_PERCENTAGE, DEDUPE_WORKING_SET_PERCENTAGE, HUGEPAGE_SIZE, IOMEM_ALIGN, MEM, NRFILES,
    REFILL_BUFFERS, SCRAMBLE_BUFFERS, SIZE, ZERO_BUFFERS,
};
use std::path::PathBuf;

/// How `dedupe_percentage` picks the block a duplicate repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DedupeMode {
    /// Repeat the previous unique buffer.
    #[default]
    Repeat,
    /// Repeat one of a fixed set of buffers covering a share of the file.
    WorkingSet,
}

/// The resolved buffer-content options of a job.
#[derive(Debug, Clone, Default)]
pub struct BufferOpts {
    pub zero: bool,
    /// Fill every write buffer anew (set by default when verify or compression is on).
    pub refill: bool,
    /// Change each 512-byte sector of a reused buffer a little on every write.
    pub scramble: bool,
    pub pattern: Option<DataPattern>,
    /// Share of each chunk left as pattern/zeroes (0 = incompressible).
    pub compress_pct: u32,
    pub compress_chunk: u32,
    pub dedupe_pct: u32,
    pub dedupe_mode: DedupeMode,
    pub dedupe_ws_pct: u32,
    /// `dedupe_global`: the working set of duplicated pages is one for every job that
    /// sets it, so duplicates repeat blocks across jobs (working_set mode only, as fio).
    pub dedupe_global: bool,
    /// Where the buffers live (`iomem`, `iomem_align`, `hugepage-size`).
    pub mem: MemOpts,
}

impl BufferOpts {
    /// Reads the options, applying fio's implied settings: compress=100 means zeroes;
    /// compression, dedupe or verify imply refill unless refill_buffers was given;
    /// a buffer pattern turns scrambling and zeroes off; compression, dedupe and verify
    /// turn scrambling off.
    pub fn resolve(r: &Reader, verify_on: bool, reads: bool) -> Result<Self, JobError> {
        let pattern = match r.text(&BUFFER_PATTERN) {
            Some(t) if !t.is_empty() => Some(
                DataPattern::parse_within(&t, r.raw.release.longest_pattern())
                    .map_err(|e| r.invalid(&BUFFER_PATTERN, e))?,
            ),
            _ => None,
        };
        let pct = |def: &OptDef| -> Result<u32, JobError> {
            Ok(r.int(def)?.unwrap_or(0).clamp(0, 100) as u32)
        };
        let mut zero = r.bool(&ZERO_BUFFERS)?;
        let mut compress_pct = pct(&BUFFER_COMPRESS_PERCENTAGE)?;
        let dedupe_pct = pct(&DEDUPE_PERCENTAGE)?;
        // fio marks the job as "compressing" as soon as either option is given, even as 0.
        let compressing = r.is_set(&BUFFER_COMPRESS_PERCENTAGE) || r.is_set(&DEDUPE_PERCENTAGE);
        let refill_set = r.is_set(&REFILL_BUFFERS);
        let mut refill = r.bool(&REFILL_BUFFERS)?;
        let mut scramble_opt = r.bool(&SCRAMBLE_BUFFERS)?;
        let mut scramble_set = r.is_set(&SCRAMBLE_BUFFERS);
        if pattern.is_some() {
            // A pattern is kept as is: refilled only when reads could overwrite it.
            if !refill_set {
                refill = compress_pct > 0 || reads;
            }
            if !scramble_set {
                scramble_opt = false;
                scramble_set = true;
            }
            if !r.is_set(&ZERO_BUFFERS) {
                zero = false;
            }
        }
        if compress_pct == 100 {
            zero = true;
            compress_pct = 0;
        } else if compress_pct > 0 && !refill_set {
            refill = true;
        }
        if dedupe_pct > 0 && !refill_set {
            refill = true;
        }
        if verify_on && !refill_set {
            refill = true;
        }
        let dedupe_mode = match r.text(&DEDUPE_MODE).as_deref() {
            Some("working_set") => DedupeMode::WorkingSet,
            _ => DedupeMode::Repeat,
        };
        let dedupe_ws_pct = pct(&DEDUPE_WORKING_SET_PERCENTAGE)?;
        if dedupe_pct > 0 && dedupe_mode == DedupeMode::WorkingSet {
            if !r.is_set(&SIZE) {
                return Err(r.invalid(&DEDUPE_MODE, "working_set needs the job's size to be set"));
            }
            if r.num(&NRFILES)? > 1 {
                return Err(r.invalid(
                    &DEDUPE_MODE,
                    "working_set works on one file per job (nrfiles=1)",
                ));
            }
            if dedupe_ws_pct + dedupe_pct > 100 {
                return Err(r.invalid(
                    &DEDUPE_WORKING_SET_PERCENTAGE,
                    format!(
                        "{dedupe_ws_pct}% of unique pages plus {dedupe_pct}% of duplicates \
                         exceed 100%"
                    ),
                ));
            }
        }
        let scramble = scramble_opt
            && (scramble_set || !(zero && r.is_set(&ZERO_BUFFERS)))
            && !compressing
            && !verify_on;
        Ok(BufferOpts {
            zero,
            refill,
            scramble,
            pattern,
            compress_pct,
            compress_chunk: r.num(&BUFFER_COMPRESS_CHUNK)?.max(0) as u32,
            dedupe_pct,
            dedupe_mode,
            dedupe_ws_pct,
            dedupe_global: r.bool(&DEDUPE_GLOBAL)?,
            mem: MemOpts::resolve(r)?,
        })
    }

    /// True when each buffer is built from a seed per write (compression or dedupe).
    pub fn seeded(&self) -> bool {
        self.compress_pct > 0 || self.dedupe_pct > 0
    }
}

/// The `iomem` kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemKind {
    #[default]
    Malloc,
    Shm,
    ShmHuge,
    Mmap,
    MmapHuge,
    MmapShared,
}

/// The resolved memory options of a job.
#[derive(Debug, Clone, Default)]
pub struct MemOpts {
    pub kind: MemKind,
    /// `mmap:FILE`, `mmaphuge:FILE`, `mmapshared:FILE`: map this file instead of anonymous
    /// memory (for mmaphuge, a file on hugetlbfs).
    pub file: Option<PathBuf>,
    /// `iomem_align`: the buffers start this many bytes past a page boundary.
    pub align: usize,
    /// `hugepage-size`: huge-page allocations are rounded up to this.
    pub hugepage: usize,
}

impl MemOpts {
    /// Reads `iomem`/`mem`, `iomem_align` and `hugepage-size`.
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let v = r.string(&MEM);
        let (word, file) = match v.split_once(':') {
            Some((w, f)) => (w.trim(), Some(f.trim())),
            None => (v.trim(), None),
        };
        let kind = match word {
            "malloc" => MemKind::Malloc,
            "shm" => MemKind::Shm,
            "shmhuge" => MemKind::ShmHuge,
            "mmap" => MemKind::Mmap,
            "mmaphuge" => MemKind::MmapHuge,
            "mmapshared" => MemKind::MmapShared,
            _ => {
                return Err(r.invalid(
                    &MEM,
                    format!("'{v}' is not one of malloc, shm, shmhuge, mmap, mmaphuge, mmapshared"),
                ))
            }
        };
        let file = match (kind, file) {
            (MemKind::Mmap | MemKind::MmapHuge | MemKind::MmapShared, Some(f)) if !f.is_empty() => {
                Some(PathBuf::from(f))
            }
            _ => None,
        };
        let hugepage = r.num(&HUGEPAGE_SIZE)?.max(0) as usize;
        if matches!(kind, MemKind::ShmHuge | MemKind::MmapHuge) && !hugepage.is_power_of_two() {
            return Err(r.invalid(&HUGEPAGE_SIZE, format!("{hugepage} is not a power of two")));
        }
        Ok(MemOpts {
            kind,
            file,
            align: r.num(&IOMEM_ALIGN)?.max(0) as usize,
            hugepage,
        })
    }
}
