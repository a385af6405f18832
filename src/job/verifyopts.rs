//! The resolved verify options of a job, with fio's derived values (the header interval,
//! `verify_pattern` implying a pattern method).

use crate::defs::datapattern::DataPattern;
use crate::defs::reader::Reader;
use crate::defs::release::FioRelease;
use crate::defs::verify_method::{HeaderLayout, Method};
use crate::error::JobError;
use crate::job::workload::Workload;
use crate::options::table::{
    DO_VERIFY, EXPERIMENTAL_VERIFY, TRIM_BACKLOG, TRIM_BACKLOG_BATCH, TRIM_PERCENTAGE,
    TRIM_VERIFY_ZERO, VERIFY, VERIFY_ASYNC, VERIFY_ASYNC_CPUS, VERIFY_BACKLOG,
    VERIFY_BACKLOG_BATCH, VERIFY_DUMP, VERIFY_FATAL, VERIFY_HEADER_SEED, VERIFY_INTERVAL,
    VERIFY_OFFSET, VERIFY_ONLY, VERIFY_PATTERN, VERIFY_PATTERN_INTERVAL, VERIFY_STATE_LOAD,
    VERIFY_STATE_SAVE, VERIFY_WRITE_SEQUENCE,
};

/// What and how to verify.
#[derive(Debug, Clone)]
pub struct VerifyOpts {
    /// `Method::None` when off.
    pub method: Method,
    /// Bytes covered by one header (fio's verify_interval after its adjustments).
    pub interval: u32,
    /// Where in each interval the header sits (`verify_offset`), 0 = at the start.
    pub offset: u32,
    pub pattern: Option<DataPattern>,
    pub do_verify: bool,
    pub only: bool,
    /// Verify after this many written blocks (0 = only at the end).
    pub backlog: u64,
    pub backlog_batch: u64,
    pub fatal: bool,
    pub dump: bool,
    /// Leave fio's verify state file behind when a writing job ends.
    pub state_save: bool,
    /// Check only what a saved state says reached the device.
    pub state_load: bool,
    /// `verify_async`: checker threads for the verify pass (0 = check inline).
    pub async_threads: u32,
    /// `verify_async_cpus`: the CPUs the checker threads are pinned to (None = inherit
    /// the job's).
    pub async_cpus: Option<Vec<usize>>,
    /// `experimental_verify`: check by replaying the write sequence, not from a log.
    pub experimental: bool,
    /// Verify trims (see `super::trim`): the share of logged writes chosen for a trim, in
    /// percent (0 = off).
    pub trim_pct: u32,
    /// `trim_verify_zero`: trimmed blocks must read back as zeroes (else they are not read).
    pub trim_zero: bool,
    /// `trim_backlog`: trim when the count of logged writes is a multiple of this (0 =
    /// never trim, as fio).
    pub trim_backlog: u64,
    /// `trim_backlog_batch`: trims per backlog point (0 = `trim_backlog`).
    pub trim_batch: u64,
    /// The headers' layout in the job's dialect (fio 3.41 changed it).
    pub layout: HeaderLayout,
    /// The job's dialect: which of fio's rules for the header checks apply.
    pub release: FioRelease,
    /// `verify_write_sequence` as given (fio 3.38), `None` when not set.
    pub write_sequence_set: Option<bool>,
    /// `verify_header_seed` as given (fio 3.40), `None` when not set.
    pub header_seed_set: Option<bool>,
    /// `verify_pattern_interval` (fio 3.40): the pattern starts again every this many
    /// bytes of a block (0: once per block).
    pub pattern_interval: u32,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A CPU list (`0-3,6`) whose CPUs all exist on this machine.
fn cpu_list(t: &str) -> Result<Vec<usize>, String> {
    let cpus = crate::job::exec::parse_cpu_list(t)?;
    // SAFETY: sysconf has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    if cpus.is_empty() {
        return Err("an empty CPU list (expected N, N-M or a comma list of them)".into());
    }
    match cpus
        .iter()
        .find(|&&c| c >= n || c >= libc::CPU_SETSIZE as usize)
    {
        Some(c) => Err(format!(
            "CPU {c} does not exist (this machine has CPUs 0-{})",
            n - 1
        )),
        None => Ok(cpus),
    }
}

impl VerifyOpts {
    /// Refuses verify trims the job could not issue: fio 3.33 trims only in a job whose
    /// pattern trims as well as writes (trimwrite, randtrimwrite) and aborts on an
    /// assertion otherwise, so the combination is an error here, said plainly.
    fn check_trims(self, r: &Reader, w: &Workload) -> Result<Self, JobError> {
        use crate::defs::Pattern;
        let trims = matches!(w.pattern, Pattern::TrimWrite | Pattern::RandTrimWrite);
        if self.on()
            && self.do_verify
            && self.trim_pct > 0
            && self.trim_backlog > 0
            && w.pattern.writes()
            && !trims
        {
            return Err(r.invalid(
                &TRIM_BACKLOG,
                format!(
                    "verify trims need a job that trims and writes (rw=trimwrite or \
                     randtrimwrite), not rw={}",
                    w.pattern.fio_name()
                ),
            ));
        }
        Ok(self)
    }

    /// Whether the verify pass checks each header's write number (fio's
    /// `verify_write_sequence` with the dialect's defaults): never in a job whose blocks
    /// vary in size or that is time based (fio's own conditions); up to fio 3.37 unless
    /// `verify_only`; from 3.38 as set, else off with `verify_only` (and from 3.40 with
    /// `norandommap` at a depth above one on an engine that is not synchronous).
    pub fn checks_write_sequence(
        &self,
        w: &Workload,
        time_based: bool,
        sync_engine: bool,
        iodepth: u32,
    ) -> bool {
        let fixed = w.bs[1].0 == w.bs[1].1;
        if !fixed || time_based || !w.pattern.writes() {
            return false;
        }
        if self.release < FioRelease::V3_38 {
            return !self.only;
        }
        // fio 3.38's source turns the check off under verify_only, set or not, but fio
        // 3.39 measured keeps an explicit verify_write_sequence=1 there, as 3.40 does.
        let overlap =
            self.release >= FioRelease::V3_40 && w.norandommap && !sync_engine && iodepth > 1;
        self.write_sequence_set.unwrap_or(!self.only && !overlap)
    }

    /// Whether the verify pass checks each header's seed, from fio 3.40 (earlier
    /// dialects keep fio 3.33's rule, in `verify::contents`): as set by
    /// `verify_header_seed`, else on for a writing job without `verify_backlog`, a zone
    /// reset frequency, `verify_only`, or an option that lets writes overlap
    /// (`norandommap`, `softrandommap`, `rw=...:N`). `None` for the older dialects.
    pub fn checks_header_seed(&self, w: &Workload) -> Option<bool> {
        if self.release < FioRelease::V3_40 {
            return None;
        }
        if let Some(set) = self.header_seed_set {
            return Some(set);
        }
        let overlap = w.norandommap || w.softrandommap || w.seq_add != 0 || w.seq_nr > 1;
        let zrf = w.zbd.as_ref().is_some_and(|z| z.reset_frequency > 0.0);
        Some(w.pattern.writes() && self.backlog == 0 && !zrf && !overlap && !self.only)
    }

    /// Refuses `verify_header_seed=1` where iobench cannot know the seeds to expect: in a
    /// job that only reads or with `verify_only` (fio then draws the writing run's seeds
    /// again from its own random state, which iobench's buffers do not follow) and with
    /// `experimental_verify` (whose replay keeps no seeds).
    fn check_header_seed(self, r: &Reader, w: &Workload) -> Result<Self, JobError> {
        if self.on() && self.header_seed_set == Some(true) {
            let why = if !w.pattern.writes() {
                Some("in a job that only reads")
            } else if self.only {
                Some("with verify_only")
            } else if self.experimental {
                Some("with experimental_verify")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(r.invalid(
                    &VERIFY_HEADER_SEED,
                    format!(
                        "checking header seeds {why} is not supported yet (iobench cannot \
                         rebuild the seeds the writing run used; use verify_header_seed=0)"
                    ),
                ));
            }
        }
        Ok(self)
    }

    /// True when writes carry verify data and reads are checked.
    pub fn on(&self) -> bool {
        !matches!(self.method, Method::None | Method::Null)
    }

    /// Resolves the options against the job's block sizes.
    pub fn resolve(r: &Reader, w: &Workload) -> Result<Self, JobError> {
        let pattern = match r.text(&VERIFY_PATTERN) {
            Some(t) if !t.is_empty() => Some(
                DataPattern::parse_within(&t, r.raw.release.longest_pattern())
                    .map_err(|e| r.invalid(&VERIFY_PATTERN, e))?,
            ),
            _ => None,
        };
        let name = r.string(&VERIFY);
        let mut method = Method::from_name(&name)
            .ok_or_else(|| r.invalid(&VERIFY, format!("unknown method '{name}'")))?;
        if pattern.is_some() && !r.is_set(&VERIFY) {
            method = Method::Pattern;
        }
        if method == Method::PatternNoHdr && pattern.is_none() {
            return Err(r.invalid(
                &VERIFY,
                "verify=pattern needs verify_pattern (a hex number, \"string\" or %o)",
            ));
        }
        let (wmin, wmax) = w.bs[1];
        let rmin = w.bs[0].0;
        let mut interval = r.num(&VERIFY_INTERVAL)?.max(0) as u64;
        if method != Method::None {
            if wmax != wmin && interval == 0 {
                interval = wmin;
            }
            if interval > wmin {
                interval = wmin;
            } else if w.pattern != crate::defs::Pattern::Write
                && w.pattern != crate::defs::Pattern::RandWrite
                && interval > rmin
            {
                interval = rmin;
            }
            if interval == 0 || wmin % interval != 0 || wmax % interval != 0 {
                interval = gcd(wmin, wmax);
            }
        }
        let layout = HeaderLayout::of(r.raw.release);
        let hdr = method.hdr_size(layout) as u64;
        if hdr > 0 && wmin > 0 && interval.min(wmin) <= hdr {
            return Err(r.invalid(
                &VERIFY,
                format!(
                    "blocksize too small: {} bytes cannot hold the {hdr}-byte {} header",
                    interval.min(wmin),
                    method.name()
                ),
            ));
        }
        // The rows' least values are fio 3.33's (twice its header, and one header); fio
        // 3.41's larger header raised them.
        let least = layout.len() as i64;
        if r.is_set(&VERIFY_INTERVAL) && r.num(&VERIFY_INTERVAL)? < 2 * least {
            return Err(r.invalid(
                &VERIFY_INTERVAL,
                format!(
                    "below the least value of fio {} (twice its {least}-byte header: {})",
                    r.raw.release,
                    2 * least
                ),
            ));
        }
        if r.is_set(&VERIFY_OFFSET) && r.num(&VERIFY_OFFSET)? < least {
            return Err(r.invalid(
                &VERIFY_OFFSET,
                format!(
                    "below the least value of fio {} (its header's {least} bytes)",
                    r.raw.release
                ),
            ));
        }
        let offset = r.num(&VERIFY_OFFSET)?.max(0) as u32;
        if method.has_header() && offset > 0 && (offset as u64 + hdr) > interval {
            return Err(r.invalid(
                &VERIFY_OFFSET,
                format!(
                    "{offset} plus the {hdr}-byte header does not fit in a {interval}-byte block"
                ),
            ));
        }
        Ok(VerifyOpts {
            method,
            interval: interval as u32,
            offset,
            pattern,
            do_verify: r.bool(&DO_VERIFY)?,
            only: r.bool(&VERIFY_ONLY)?,
            backlog: r.bytes(&VERIFY_BACKLOG)?,
            backlog_batch: r.num(&VERIFY_BACKLOG_BATCH)?.max(0) as u64,
            fatal: r.bool(&VERIFY_FATAL)?,
            dump: r.bool(&VERIFY_DUMP)?,
            state_save: r.bool(&VERIFY_STATE_SAVE)?,
            state_load: r.bool(&VERIFY_STATE_LOAD)?,
            async_threads: r.num(&VERIFY_ASYNC)?.clamp(0, 1024) as u32,
            async_cpus: match r.text(&VERIFY_ASYNC_CPUS) {
                Some(t) => Some(cpu_list(&t).map_err(|e| r.invalid(&VERIFY_ASYNC_CPUS, e))?),
                None => None,
            },
            experimental: r.bool(&EXPERIMENTAL_VERIFY)?,
            trim_pct: r.num(&TRIM_PERCENTAGE)?.clamp(0, 100) as u32,
            trim_zero: r.bool(&TRIM_VERIFY_ZERO)?,
            trim_backlog: r.bytes(&TRIM_BACKLOG)?,
            trim_batch: r.num(&TRIM_BACKLOG_BATCH)?.max(0) as u64,
            layout,
            release: r.raw.release,
            write_sequence_set: match r.is_set(&VERIFY_WRITE_SEQUENCE) {
                true => Some(r.bool(&VERIFY_WRITE_SEQUENCE)?),
                false => None,
            },
            header_seed_set: match r.is_set(&VERIFY_HEADER_SEED) {
                true => Some(r.bool(&VERIFY_HEADER_SEED)?),
                false => None,
            },
            pattern_interval: r.num(&VERIFY_PATTERN_INTERVAL)?.clamp(0, u32::MAX as i64) as u32,
        })
        .and_then(|v| v.check_trims(r, w))
        .and_then(|v| v.check_header_seed(r, w))
    }
}
