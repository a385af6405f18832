//! A job's buffer options: what write buffers hold (`buffer_pattern`, compression, dedupe,
//! refills) and where they live (`iomem`, `iomem_align`, `hugepage-size`). The filling
//! and the memory itself are `buffer`'s.

use crate::defs::datapattern::DataPattern;
use crate::defs::reader::Reader;
use crate::error::JobError;
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
        let pattern = match r.text("buffer_pattern") {
            Some(t) if !t.is_empty() => {
                Some(DataPattern::parse(&t).map_err(|e| r.invalid("buffer_pattern", e))?)
            }
            _ => None,
        };
        let pct = |name: &str| -> Result<u32, JobError> {
            Ok(r.int(name)?.unwrap_or(0).clamp(0, 100) as u32)
        };
        let mut zero = r.bool("zero_buffers")?;
        let mut compress_pct = pct("buffer_compress_percentage")?;
        let dedupe_pct = pct("dedupe_percentage")?;
        // fio marks the job as "compressing" as soon as either option is given, even as 0.
        let compressing = r.is_set("buffer_compress_percentage") || r.is_set("dedupe_percentage");
        let refill_set = r.is_set("refill_buffers");
        let mut refill = r.bool("refill_buffers")?;
        let mut scramble_opt = r.bool("scramble_buffers")?;
        let mut scramble_set = r.is_set("scramble_buffers");
        if pattern.is_some() {
            // A pattern is kept as is: refilled only when reads could overwrite it.
            if !refill_set {
                refill = compress_pct > 0 || reads;
            }
            if !scramble_set {
                scramble_opt = false;
                scramble_set = true;
            }
            if !r.is_set("zero_buffers") {
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
        let dedupe_mode = match r.text("dedupe_mode").as_deref() {
            Some("working_set") => DedupeMode::WorkingSet,
            _ => DedupeMode::Repeat,
        };
        let dedupe_ws_pct = pct("dedupe_working_set_percentage")?;
        if dedupe_pct > 0 && dedupe_mode == DedupeMode::WorkingSet {
            if !r.is_set("size") {
                return Err(r.invalid("dedupe_mode", "working_set needs the job's size to be set"));
            }
            if r.int("nrfiles")?.unwrap_or(1) > 1 {
                return Err(r.invalid(
                    "dedupe_mode",
                    "working_set works on one file per job (nrfiles=1)",
                ));
            }
            if dedupe_ws_pct + dedupe_pct > 100 {
                return Err(r.invalid(
                    "dedupe_working_set_percentage",
                    format!(
                        "{dedupe_ws_pct}% of unique pages plus {dedupe_pct}% of duplicates \
                         exceed 100%"
                    ),
                ));
            }
        }
        let scramble = scramble_opt
            && (scramble_set || !(zero && r.is_set("zero_buffers")))
            && !compressing
            && !verify_on;
        Ok(BufferOpts {
            zero,
            refill,
            scramble,
            pattern,
            compress_pct,
            compress_chunk: r.int("buffer_compress_chunk")?.unwrap_or(512).max(0) as u32,
            dedupe_pct,
            dedupe_mode,
            dedupe_ws_pct,
            dedupe_global: r.bool("dedupe_global")?,
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
        let v = r.text("mem").unwrap_or_else(|| "malloc".into());
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
                    "mem",
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
        let hugepage = r.int("hugepage-size")?.unwrap_or(2 << 20).max(0) as usize;
        if matches!(kind, MemKind::ShmHuge | MemKind::MmapHuge) && !hugepage.is_power_of_two() {
            return Err(r.invalid("hugepage-size", format!("{hugepage} is not a power of two")));
        }
        Ok(MemOpts {
            kind,
            file,
            align: r.int("iomem_align")?.unwrap_or(0).max(0) as usize,
            hugepage,
        })
    }
}
