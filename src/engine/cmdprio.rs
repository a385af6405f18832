//! fio's per-I/O priorities for libaio and io_uring (cmdprio_percentage, cmdprio_class,
//! cmdprio, cmdprio_bssplit): their options, shared by both engines, and the per-I/O draw
//! of which priority an I/O carries. The engine puts the priority in the kernel request
//! (an iocb's reqprio, an SQE's ioprio) and in the unit, so the job reports each
//! priority's latency apart, as fio does (`clat prio 1/0 …` lines, JSON `prios`).

use crate::defs::reader::Reader;
use crate::defs::rows::{MAX_PRIO_HINT, PRIO, PRIOCLASS, PRIOHINT};
use crate::defs::Ddir;
use crate::defs::{opt, Category as C, Kind as K, OptDef};
use crate::error::JobError;

pub const CMDPRIO_PERCENTAGE: OptDef = opt(
    "cmdprio_percentage",
    K::IntList { min: 0, max: 100 },
    "Share of I/Os sent at the cmdprio priority, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(0, 100);

pub const CMDPRIO_CLASS: OptDef = opt(
    "cmdprio_class",
    K::IntList { min: 1, max: 3 },
    "Priority class for prioritised I/Os, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(1, 3);

pub const CMDPRIO: OptDef = opt(
    "cmdprio",
    K::IntList { min: 0, max: 7 },
    "Priority level for prioritised I/Os, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(0, 7);

pub const CMDPRIO_BSSPLIT: OptDef = opt(
    "cmdprio_bssplit",
    K::Special,
    "Priorities by block size, e.g. 4k/50/1/7",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"]);

pub const CMDPRIO_HINT: OptDef = opt(
    "cmdprio_hint",
    K::IntList {
        min: 0,
        max: MAX_PRIO_HINT,
    },
    "Priority hint for prioritised I/Os, per direction",
)
.cat(C::Engine)
.engines(&["io_uring", "io_uring_cmd", "libaio"])
.range(0, MAX_PRIO_HINT)
.since(crate::defs::FioRelease::V3_36);

/// The kernel's ioprio value: class in the top three bits, the hint (fio 3.36's
/// `priohint`, `cmdprio_hint`; command duration limits) in the ten bits above the level.
pub fn ioprio(class: u32, level: u32, hint: u32) -> u16 {
    ((class << 13) | ((hint & 0x3ff) << 3) | (level & 7)) as u16
}

/// One `cmdprio_bssplit` entry: I/Os of `bs` bytes carry `ioprio` `pct` percent of the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BsPrio {
    bs: u64,
    pct: u32,
    ioprio: u16,
}

/// The priorities of a job's I/Os, per direction (read, write).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CmdprioOpts {
    /// The priority of an I/O not drawn (the job's prioclass/prio, or 0).
    default: u16,
    pct: [u32; 2],
    ioprio: [u16; 2],
    bssplit: [Vec<BsPrio>; 2],
}

/// Reads `def=a,b` (the last value repeating; empty: `dflt`).
fn per_dir(r: &Reader, def: &OptDef, dflt: i64) -> Result<[i64; 2], JobError> {
    let Some(v) = r.raw.value(def) else {
        return Ok([dflt; 2]);
    };
    let mut out = [dflt; 2];
    for (o, p) in out.iter_mut().zip(crate::defs::value::per_dir(v)) {
        if let Some(p) = p {
            *o = r.int_of(p, def)?;
        }
    }
    Ok(out)
}

impl CmdprioOpts {
    /// Reads the cmdprio options; `None` when the job sets no percentage (no I/O gets a
    /// priority of its own, and latencies are not split).
    pub fn resolve(r: &Reader) -> Result<Option<Self>, JobError> {
        if !r.is_set(&CMDPRIO_PERCENTAGE) && !r.is_set(&CMDPRIO_BSSPLIT) {
            return Ok(None);
        }
        let default = if r.is_set(&PRIO) || r.is_set(&PRIOCLASS) || r.is_set(&PRIOHINT) {
            ioprio(
                r.num(&PRIOCLASS)?.clamp(0, 3) as u32,
                r.num(&PRIO)?.clamp(0, 7) as u32,
                r.num(&PRIOHINT)?.clamp(0, MAX_PRIO_HINT) as u32,
            )
        } else {
            0
        };
        let pct = per_dir(r, &CMDPRIO_PERCENTAGE, 0)?;
        let class = per_dir(r, &CMDPRIO_CLASS, 1)?;
        let level = per_dir(r, &CMDPRIO, 0)?;
        let hint = per_dir(r, &CMDPRIO_HINT, 0)?;
        let prio = |d: usize| {
            ioprio(
                class[d].clamp(1, 3) as u32,
                level[d].clamp(0, 7) as u32,
                hint[d].clamp(0, MAX_PRIO_HINT) as u32,
            )
        };
        let mut o = CmdprioOpts {
            default,
            pct: [pct[0].clamp(0, 100) as u32, pct[1].clamp(0, 100) as u32],
            ioprio: [prio(0), prio(1)],
            bssplit: Default::default(),
        };
        if let Some(v) = r.raw.value(&CMDPRIO_BSSPLIT) {
            if r.is_set(&CMDPRIO_PERCENTAGE) {
                return Err(r.invalid(
                    &CMDPRIO_BSSPLIT,
                    "cmdprio_percentage and cmdprio_bssplit cannot be used together",
                ));
            }
            let parts = crate::defs::value::per_dir(v);
            for (d, text) in parts.into_iter().take(2).enumerate() {
                let text = text.unwrap_or("");
                for e in text.split(':').map(str::trim).filter(|e| !e.is_empty()) {
                    let f: Vec<&str> = e.split('/').collect();
                    let bad = || {
                        r.invalid(
                            &CMDPRIO_BSSPLIT,
                            format!("'{e}' is not bs/percent or bs/percent/class/level[/hint]"),
                        )
                    };
                    if ![2, 4, 5].contains(&f.len()) {
                        return Err(bad());
                    }
                    let bs = r.size_of(f[0], &CMDPRIO_BSSPLIT)?;
                    let num = |t: &str, max: i64| {
                        crate::defs::value::parse_int(t)
                            .ok()
                            .filter(|n| (0..=max).contains(n))
                            .ok_or_else(bad)
                    };
                    let pct = num(f[1], 100)? as u32;
                    let ioprio = if f.len() >= 4 {
                        // bs/percent/class/level[/hint] (the hint since fio 3.36; 0 without).
                        let hint = match f.get(4) {
                            Some(h) => num(h, MAX_PRIO_HINT)? as u32,
                            None => 0,
                        };
                        ioprio(num(f[2], 3)? as u32, num(f[3], 7)? as u32, hint)
                    } else {
                        o.ioprio[d]
                    };
                    o.bssplit[d].push(BsPrio { bs, pct, ioprio });
                }
            }
        }
        Ok(Some(o))
    }

    /// Every priority the job's I/Os may carry, the default first (fio's report order).
    pub fn ioprios(&self) -> Vec<u16> {
        let mut v = vec![self.default];
        for d in 0..2 {
            let more = std::iter::once(self.ioprio[d])
                .filter(|_| self.pct[d] > 0)
                .chain(self.bssplit[d].iter().map(|b| b.ioprio));
            for p in more {
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }
}

/// The per-I/O draw of priorities.
#[derive(Debug, Clone)]
pub struct Cmdprio {
    o: CmdprioOpts,
    /// xorshift64 state: a cheap, well-spread draw of 0..100 per I/O.
    rng: u64,
}

impl Cmdprio {
    pub fn new(o: CmdprioOpts) -> Self {
        Cmdprio {
            o,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// The priority of the next I/O of direction `ddir` and `len` bytes.
    #[inline]
    pub fn pick(&mut self, ddir: Ddir, len: usize) -> u16 {
        let d = match ddir {
            Ddir::Read => 0,
            Ddir::Write => 1,
            Ddir::Trim => return self.o.default,
        };
        let (pct, prio) = if self.o.bssplit[d].is_empty() {
            (self.o.pct[d], self.o.ioprio[d])
        } else {
            match self.o.bssplit[d].iter().find(|b| b.bs == len as u64) {
                Some(b) => (b.pct, b.ioprio),
                None => return self.o.default,
            }
        };
        if pct == 0 {
            return self.o.default;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        if ((self.rng % 100) as u32) < pct {
            prio
        } else {
            self.o.default
        }
    }

    pub fn ioprios(&self) -> Vec<u16> {
        self.o.ioprios()
    }
}
