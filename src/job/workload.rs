//! What I/O a job issues: the pattern, block sizes, where and how much.

use super::reader::Reader;
use super::{Pattern, SizeSpec};
use crate::error::JobError;

/// The resolved workload options.
#[derive(Debug, Clone)]
pub struct Workload {
    pub pattern: Pattern,
    /// Block size range per direction (min, max), in bytes.
    pub bs: [(u64, u64); 3],
    pub size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub norandommap: bool,
}

impl Workload {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let rw_text = r.text("rw").unwrap_or_else(|| "read".into());
        let pattern = match rw_text.split(':').next().unwrap_or("read") {
            "read" => Pattern::Read,
            "write" => Pattern::Write,
            "trim" => Pattern::Trim,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "randtrim" => Pattern::RandTrim,
            "rw" | "readwrite" => Pattern::ReadWrite,
            "randrw" => Pattern::RandRw,
            "trimwrite" => Pattern::TrimWrite,
            "randtrimwrite" => Pattern::RandTrimWrite,
            other => return Err(r.invalid("rw", format!("unknown pattern '{other}'"))),
        };
        let bs_text = r.text("bs").unwrap_or_else(|| "4096".into());
        let mut bs = [(4096, 4096); 3];
        let parts: Vec<&str> = bs_text.split(',').collect();
        for (i, slot) in bs.iter_mut().enumerate() {
            let part = parts.get(i).copied().unwrap_or(parts[parts.len() - 1]);
            if !part.is_empty() {
                let v = r.size_of(part, "bs")?;
                *slot = (v, v);
            }
        }
        if let Some(range) = r.text("bsrange") {
            let parts: Vec<&str> = range.split(',').collect();
            for (i, slot) in bs.iter_mut().enumerate() {
                let part = parts.get(i).copied().unwrap_or(parts[parts.len() - 1]);
                if let Some((a, b)) = part.split_once(['-', ':']) {
                    *slot = (r.size_of(a, "bsrange")?, r.size_of(b, "bsrange")?);
                }
            }
        }
        Ok(Workload {
            pattern,
            bs,
            size: r.size_spec("size")?,
            offset: r.size_spec("offset")?.unwrap_or(SizeSpec::Bytes(0)),
            norandommap: r.bool("norandommap")?,
        })
    }
}
