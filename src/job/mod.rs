//! The RESOLVED stage: a [`Job`] has every value typed and in bytes, microseconds and counts,
//! with defaults applied, so the run core never looks at option text.

use crate::error::JobError;
use crate::options::table::TimeUnit;
use crate::options::value::{self, KbBase};
use crate::options::RawJob;

/// A data direction, indexing per-direction arrays as fio does: read, write, trim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
}

/// The access pattern of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl Pattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead
                | Pattern::RandWrite
                | Pattern::RandTrim
                | Pattern::RandRw
                | Pattern::RandTrimWrite
        )
    }
    /// True when the pattern writes.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::Trim | Pattern::RandTrim
        )
    }
    /// fio's name for the pattern, as printed in headers.
    pub fn fio_name(self) -> &'static str {
        match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::Trim => "trim",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandTrim => "randtrim",
            Pattern::ReadWrite => "rw",
            Pattern::RandRw => "randrw",
            Pattern::TrimWrite => "trimwrite",
            Pattern::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// A size that may be a share of the file: `size=20%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeSpec {
    Bytes(u64),
    Percent(f64),
}

/// One runnable job (one clone of a section when numjobs > 1 is expanded by the runner).
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    pub pattern: Pattern,
    /// Block size range per direction (min, max), in bytes.
    pub bs: [(u64, u64); 3],
    pub ioengine: String,
    pub iodepth: u32,
    pub size: Option<SizeSpec>,
    pub filesize: Option<u64>,
    pub offset: SizeSpec,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub direct: bool,
    pub numjobs: u32,
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    pub group_reporting: bool,
    pub stonewall: bool,
    pub new_group: bool,
    pub norandommap: bool,
    pub kb_base: KbBase,
    /// The raw options, for anything not typed above yet and for `--showcmd`.
    pub raw: RawJob,
}

fn invalid(raw: &RawJob, message: String) -> JobError {
    JobError::Invalid {
        job: raw.name.clone(),
        message,
    }
}

/// Typed reads of a RawJob's values, each falling back to the table's default.
struct Reader<'a> {
    raw: &'a RawJob,
    kb: KbBase,
}

impl Reader<'_> {
    fn text(&self, name: &str) -> Option<String> {
        self.raw
            .value(name)
            .map(str::to_string)
            .or_else(|| crate::options::lookup(name).and_then(|d| d.default.map(str::to_string)))
    }
    fn bool(&self, name: &str) -> Result<bool, JobError> {
        match self.text(name) {
            None => Ok(false),
            Some(v) => value::parse_bool(&v).map_err(|e| invalid(self.raw, format!("{name}: {e}"))),
        }
    }
    fn int(&self, name: &str) -> Result<Option<i64>, JobError> {
        self.text(name)
            .map(|v| value::parse_int(&v).map_err(|e| invalid(self.raw, format!("{name}: {e}"))))
            .transpose()
    }
    fn size(&self, v: &str, name: &str) -> Result<u64, JobError> {
        value::parse_size(v, self.kb).map_err(|e| invalid(self.raw, format!("{name}: {e}")))
    }
    fn size_spec(&self, name: &str) -> Result<Option<SizeSpec>, JobError> {
        match self.text(name) {
            None => Ok(None),
            Some(v) => match v.trim().strip_suffix('%') {
                Some(p) => p
                    .trim()
                    .parse::<f64>()
                    .map(|p| Some(SizeSpec::Percent(p)))
                    .map_err(|_| invalid(self.raw, format!("{name}: bad percentage '{v}'"))),
                None => Ok(Some(SizeSpec::Bytes(self.size(&v, name)?))),
            },
        }
    }
    fn time_us(&self, name: &str, unit: TimeUnit) -> Result<u64, JobError> {
        match self.text(name) {
            None => Ok(0),
            Some(v) => value::parse_time_us(&v, unit)
                .map_err(|e| invalid(self.raw, format!("{name}: {e}"))),
        }
    }
}

/// Resolves one raw job into a typed job.
pub fn resolve(raw: &RawJob) -> Result<Job, JobError> {
    let kb = match raw.value("kb_base") {
        Some("1000") => KbBase::Decimal,
        _ => KbBase::Binary,
    };
    let r = Reader { raw, kb };
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
        other => return Err(invalid(raw, format!("rw: unknown pattern '{other}'"))),
    };
    let bs_text = r.text("bs").unwrap_or_else(|| "4096".into());
    let mut bs = [(4096, 4096); 3];
    let parts: Vec<&str> = bs_text.split(',').collect();
    for (i, slot) in bs.iter_mut().enumerate() {
        let part = parts.get(i).copied().unwrap_or(parts[parts.len() - 1]);
        if !part.is_empty() {
            let v = r.size(part, "bs")?;
            *slot = (v, v);
        }
    }
    if let Some(range) = r.text("bsrange") {
        let parts: Vec<&str> = range.split(',').collect();
        for (i, slot) in bs.iter_mut().enumerate() {
            let part = parts.get(i).copied().unwrap_or(parts[parts.len() - 1]);
            if let Some((a, b)) = part.split_once(['-', ':']) {
                *slot = (r.size(a, "bsrange")?, r.size(b, "bsrange")?);
            }
        }
    }
    let direct = if raw.get("buffered").is_some() && raw.get("direct").is_none() {
        !r.bool("buffered")?
    } else {
        r.bool("direct")?
    };
    Ok(Job {
        name: raw.name.clone(),
        pattern,
        bs,
        ioengine: r.text("ioengine").unwrap_or_else(|| "psync".into()),
        iodepth: r.int("iodepth")?.unwrap_or(1) as u32,
        size: r.size_spec("size")?,
        filesize: match r.text("filesize") {
            Some(v) => Some(r.size(&v, "filesize")?),
            None => None,
        },
        offset: r.size_spec("offset")?.unwrap_or(SizeSpec::Bytes(0)),
        filename: r.text("filename"),
        directory: r.text("directory"),
        direct,
        numjobs: r.int("numjobs")?.unwrap_or(1) as u32,
        runtime_us: r.time_us("runtime", TimeUnit::Sec)?,
        time_based: r.bool("time_based")?,
        ramp_time_us: r.time_us("ramp_time", TimeUnit::Sec)?,
        group_reporting: r.bool("group_reporting")?,
        stonewall: r.bool("stonewall")?,
        new_group: r.bool("new_group")?,
        norandommap: r.bool("norandommap")?,
        kb_base: kb,
        raw: raw.clone(),
    })
}
