//! The resolved verify options of a job, with fio's derived values (the header interval,
//! `verify_pattern` implying a pattern method).

use crate::defs::datapattern::DataPattern;
use crate::defs::reader::Reader;
use crate::defs::verify_method::Method;
use crate::error::JobError;
use crate::job::workload::Workload;
use crate::options::table::{
    DO_VERIFY, EXPERIMENTAL_VERIFY, TRIM_BACKLOG, TRIM_BACKLOG_BATCH, TRIM_PERCENTAGE,
    TRIM_VERIFY_ZERO, VERIFY, VERIFY_ASYNC, VERIFY_ASYNC_CPUS, VERIFY_BACKLOG,
    VERIFY_BACKLOG_BATCH, VERIFY_DUMP, VERIFY_FATAL, VERIFY_INTERVAL, VERIFY_OFFSET, VERIFY_ONLY,
    VERIFY_PATTERN, VERIFY_STATE_LOAD, VERIFY_STATE_SAVE,
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
        let hdr = method.hdr_size() as u64;
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
        })
        .and_then(|v| v.check_trims(r, w))
    }
}
