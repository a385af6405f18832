//! The large payloads: fio 3.33's `struct thread_stat` + `struct group_run_stats` (TS), the
//! group totals alone (GS) and `struct disk_util_stat` + `struct disk_util_agg` (DU), at
//! the byte offsets fio's packed structs have on a 64-bit little-endian host, and their
//! conversion to and from iobench's [`JobStats`], [`GroupStats`] and [`DiskUtil`].
//!
//! The offsets were measured with `offsetof` on fio 3.33's own headers; the tests decode
//! what a real `fio --server` sends (tests/hosts/fio_client_server.rs), which would fail if one
//! were off.

use super::{Fields, Image, Proto, ProtoError};
use crate::defs::percentiles::PercentileList;
use crate::job::reportopts::{StatsConfig, Unified};
use crate::stats::disk::{Aggregate, DiskUtil, RawDiskStat};
use crate::stats::group::GroupStats;
use crate::stats::hist::{Hist, PLAT_NR};
use crate::stats::iostat::IoStat;
use crate::stats::{JobStats, LAT_M_NR, LAT_N_NR, LAT_U_NR, MAP_NR};

/// `sizeof(struct thread_stat)`.
pub const TS_LEN: usize = 183_888;
/// `sizeof(struct group_run_stats)` (packed).
pub const GS_LEN: usize = 164;
/// `sizeof(struct cmd_ts_pdu)`: the thread_stat, then the group at [`TS_LEN`], padded to 8.
/// (Read by the assertion below and the tests; Rust 1.82 does not count the assertion.)
#[cfg_attr(not(test), allow(dead_code))]
pub const TS_PDU_LEN: usize = 184_056;
const _: () = assert!(TS_PDU_LEN == (TS_LEN + GS_LEN).div_ceil(8) * 8);
/// `sizeof(struct cmd_du_pdu)`.
pub const DU_LEN: usize = 256;

/// `struct io_stat`: max, min, samples, then mean and S as 16-byte `fio_fp64_t`s.
const IO_STAT: usize = 56;
const FP64: usize = 16;
/// `FIO_IO_U_LIST_MAX_LEN`.
const LIST_MAX: usize = 20;

// Offsets in `struct thread_stat`.
const NAME: usize = 0;
const VERROR: usize = 128;
const ERROR: usize = 256;
const THREAD_NUMBER: usize = 260;
const GROUPID: usize = 264;
const PID: usize = 268;
const DESCRIPTION: usize = 272;
const MEMBERS: usize = 528;
const UNIFIED: usize = 532;
const SYNC_STAT: usize = 544;
const CLAT_STAT: usize = 600;
const SLAT_STAT: usize = 768;
const LAT_STAT: usize = 936;
const BW_STAT: usize = 1104;
const IOPS_STAT: usize = 1272;
const USR_TIME: usize = 1440;
const SYS_TIME: usize = 1448;
const CTX: usize = 1456;
const MINF: usize = 1464;
const MAJF: usize = 1472;
const CLAT_PCT: usize = 1480;
const LAT_PCT: usize = 1484;
const SLAT_PCT: usize = 1488;
const PCT_PRECISION: usize = 1496;
const PCT_LIST: usize = 1504;
const IO_U_MAP: usize = 1824;
const IO_U_SUBMIT: usize = 1880;
const IO_U_COMPLETE: usize = 1936;
const IO_U_LAT_N: usize = 1992;
const IO_U_LAT_U: usize = 2072;
const IO_U_LAT_M: usize = 2152;
const IO_U_PLAT: usize = 2248;
const IO_U_SYNC_PLAT: usize = 135_880;
const TOTAL_IO_U: usize = 150_728;
const SHORT_IO_U: usize = 150_760;
const DROP_IO_U: usize = 150_784;
const TOTAL_SUBMIT: usize = 150_808;
const TOTAL_COMPLETE: usize = 150_816;
const IO_BYTES: usize = 150_824;
const RUNTIME: usize = 150_848;
const TOTAL_RUN_TIME: usize = 150_872;
const CONTINUE_ON_ERROR: usize = 150_880;
const FIRST_ERROR: usize = 150_884;
const TOTAL_ERR_COUNT: usize = 150_888;
const NR_ZONE_RESETS: usize = 150_896;
const KB_BASE: usize = 183_680;
const UNIT_BASE: usize = 183_684;
const LATENCY_DEPTH: usize = 183_688;
const LATENCY_TARGET: usize = 183_696;
const LATENCY_PERCENTILE: usize = 183_704;
const LATENCY_WINDOW: usize = 183_720;
const SIG_FIGS: usize = 183_728;
const SS_DUR: usize = 183_732;
const SS_STATE: usize = 183_740;
const SS_HEAD: usize = 183_744;
const SS_LIMIT: usize = 183_748;
const SS_SLOPE: usize = 183_764;
const SS_DEVIATION: usize = 183_780;
const SS_CRITERION: usize = 183_796;
const SS_IOPS_OFFSET: usize = 183_816;
const SS_BW_OFFSET: usize = 183_824;

/// Where `job_start` sits from version 101 on (after `groupid`, 8-aligned).
const JOB_START: usize = 268;

/// The layout of `struct thread_stat` (and of the TS payload) in one protocol version, as
/// shifts of fio 3.33's offsets (the constants above): from 101 every field after
/// `groupid` moves 8 bytes for `job_start`; from 114 `nr_zone_resets` moves after
/// `unit_base` (which then move back), followed by a 16-bit flag, so `latency_depth`
/// moves 12; from 115 the struct grows by the latency ring's offset.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// The shift of the fields after `groupid`.
    mid: usize,
    zone_at_end: bool,
    ss_lat: bool,
    /// `sizeof(struct thread_stat)`, where the group totals start.
    ts_len: usize,
}

impl Layout {
    fn of(p: Proto) -> Layout {
        let mid = if p.job_start() { 8 } else { 0 };
        Layout {
            mid,
            zone_at_end: p.zone_resets_at_end(),
            ss_lat: p.ss_lat(),
            ts_len: TS_LEN + mid + if p.ss_lat() { 8 } else { 0 },
        }
    }

    /// Where the field fio 3.33 has at `o` sits in this layout.
    fn at(&self, o: usize) -> usize {
        match o {
            o if o < PID => o,
            NR_ZONE_RESETS if self.zone_at_end => LATENCY_DEPTH,
            KB_BASE | UNIT_BASE if self.zone_at_end => o,
            LATENCY_DEPTH if self.zone_at_end => o + 12,
            o => o + self.mid,
        }
    }

    /// `count_zone_resets` (version 114 on).
    fn count_zone_resets(&self) -> usize {
        LATENCY_DEPTH + 8
    }

    /// `ss_lat_data_offset` (version 115 on): right after `ss_bw_data_offset` (fio 3.42's
    /// `offsetof`: 183840, the bandwidth ring's at 183832).
    fn ss_lat_offset(&self) -> usize {
        self.at(SS_BW_OFFSET) + 8
    }

    /// `sizeof(struct cmd_ts_pdu)`: the thread_stat and the group, padded to 8.
    fn pdu_len(&self) -> usize {
        (self.ts_len + GS_LEN).div_ceil(8) * 8
    }
}

/// fio's steady-state flags (steadystate.h).
const SS_IOPS: u32 = 1;
const SS_BW: u32 = 1 << 1;
const SS_SLOPE_F: u32 = 1 << 2;
const SS_ATTAINED: u32 = 1 << 3;
const SS_DATA: u32 = 1 << 5;
const SS_PCT: u32 = 1 << 6;
const SS_BUFFER_FULL: u32 = 1 << 7;
/// fio 3.42's latency criteria.
const SS_LAT: u32 = 1 << 8;
/// Longest steady-state window accepted from a peer (fio's is `ss_dur` seconds).
const SS_MAX_DUR: u64 = 1 << 20;

/// fio's `N2S_BYTEPERSEC` and `N2S_BITPERSEC` (`unit_base` after fio resolves it).
const N2S_BYTEPERSEC: u32 = 4;
const N2S_BITPERSEC: u32 = 5;

fn put_io_stat(img: &mut Image, off: usize, s: &IoStat) {
    img.u64(off, s.max);
    img.u64(off + 8, s.min);
    img.u64(off + 16, s.samples);
    img.f64(off + 24, s.mean);
    img.f64(off + 24 + FP64, s.s);
}

fn get_io_stat(f: &Fields, off: usize) -> Result<IoStat, ProtoError> {
    Ok(IoStat {
        max: f.u64(off)?,
        min: f.u64(off + 8)?,
        samples: f.u64(off + 16)?,
        mean: f.f64(off + 24)?,
        s: f.f64(off + 24 + FP64)?,
    })
}

fn unified_code(u: Unified) -> u32 {
    match u {
        Unified::None => 0,
        Unified::Mixed => 1,
        Unified::Both => 2,
    }
}

fn unified_of(code: u32) -> Unified {
    match code {
        1 => Unified::Mixed,
        2 => Unified::Both,
        _ => Unified::None,
    }
}

/// A TS message: one reported job and its group's totals.
#[derive(Debug, Clone)]
pub struct WireTs {
    pub stats: JobStats,
    /// fio's 1-based thread number of the (first) job of this report.
    pub thread_number: u32,
    pub group: WireGs,
}

impl WireTs {
    /// The TS payload of a reported job (`thread_number` is 1-based) and its group, in
    /// fio 3.33's layout.
    pub fn encode(t: &JobStats, thread_number: u32, g: &GroupStats) -> Vec<u8> {
        Self::encode_as(Proto::OLDEST, t, thread_number, g)
    }

    /// [`WireTs::encode`] in the layout of protocol version `p`.
    pub fn encode_as(p: Proto, t: &JobStats, thread_number: u32, g: &GroupStats) -> Vec<u8> {
        let l = Layout::of(p);
        let mut img = Image::new(l.pdu_len());
        let i = &mut img;
        i.cstr(l.at(NAME), 128, &t.name);
        i.cstr(l.at(VERROR), 128, &t.verror);
        i.u32(l.at(ERROR), t.error as u32);
        i.u32(l.at(THREAD_NUMBER), thread_number);
        i.u32(l.at(GROUPID), t.groupid);
        i.u32(l.at(PID), t.pid);
        i.cstr(
            l.at(DESCRIPTION),
            256,
            t.description.as_deref().unwrap_or(""),
        );
        i.u32(l.at(MEMBERS), t.jobs);
        i.u32(l.at(UNIFIED), unified_code(t.cfg.unified));
        if p.job_start() {
            i.u64(JOB_START, t.job_start);
        }
        put_io_stat(i, l.at(SYNC_STAT), &t.sync);
        for (d, dir) in t.dir.iter().enumerate() {
            put_io_stat(i, l.at(CLAT_STAT) + d * IO_STAT, &dir.clat);
            put_io_stat(i, l.at(SLAT_STAT) + d * IO_STAT, &dir.slat);
            put_io_stat(i, l.at(LAT_STAT) + d * IO_STAT, &dir.lat);
            put_io_stat(i, l.at(BW_STAT) + d * IO_STAT, &dir.bw);
            put_io_stat(i, l.at(IOPS_STAT) + d * IO_STAT, &dir.iops);
            i.u64(l.at(TOTAL_IO_U) + 8 * d, dir.ios);
            i.u64(l.at(SHORT_IO_U) + 8 * d, dir.short);
            i.u64(l.at(DROP_IO_U) + 8 * d, dir.dropped);
            i.u64(l.at(IO_BYTES) + 8 * d, dir.bytes);
            i.u64(l.at(RUNTIME) + 8 * d, dir.runtime_ms);
            for (k, h) in dir.hist.iter().enumerate() {
                let base = l.at(IO_U_PLAT) + ((k * 3 + d) * PLAT_NR) * 8;
                for (b, &c) in h.buckets().iter().enumerate().take(PLAT_NR) {
                    if c != 0 {
                        i.u64(base + 8 * b, c);
                    }
                }
            }
        }
        i.u64(l.at(TOTAL_IO_U) + 24, t.sync_ios);
        for (b, &c) in t.sync_hist.buckets().iter().enumerate().take(PLAT_NR) {
            if c != 0 {
                i.u64(l.at(IO_U_SYNC_PLAT) + 8 * b, c);
            }
        }
        i.u64(l.at(USR_TIME), t.usr_ms);
        i.u64(l.at(SYS_TIME), t.sys_ms);
        i.u64(l.at(CTX), t.ctx);
        i.u64(l.at(MINF), t.minf);
        i.u64(l.at(MAJF), t.majf);
        i.u32(l.at(CLAT_PCT), t.cfg.clat_percentiles as u32);
        i.u32(l.at(LAT_PCT), t.cfg.lat_percentiles as u32);
        i.u32(l.at(SLAT_PCT), t.cfg.slat_percentiles as u32);
        i.u64(l.at(PCT_PRECISION), t.cfg.percentiles.precision as u64);
        for (k, p) in t.cfg.percentiles.list.iter().take(LIST_MAX).enumerate() {
            i.f64(l.at(PCT_LIST) + k * FP64, *p);
        }
        for k in 0..MAP_NR {
            i.u64(l.at(IO_U_MAP) + 8 * k, t.depth_map[k]);
            i.u64(l.at(IO_U_SUBMIT) + 8 * k, t.submit_map[k]);
            i.u64(l.at(IO_U_COMPLETE) + 8 * k, t.complete_map[k]);
        }
        for k in 0..LAT_N_NR {
            i.u64(l.at(IO_U_LAT_N) + 8 * k, t.lat_n[k]);
        }
        for k in 0..LAT_U_NR {
            i.u64(l.at(IO_U_LAT_U) + 8 * k, t.lat_u[k]);
        }
        for k in 0..LAT_M_NR {
            i.u64(l.at(IO_U_LAT_M) + 8 * k, t.lat_m[k]);
        }
        i.u64(l.at(TOTAL_SUBMIT), t.total_submit);
        i.u64(l.at(TOTAL_COMPLETE), t.total_complete);
        i.u64(l.at(TOTAL_RUN_TIME), t.total_run_ms);
        i.u16(l.at(CONTINUE_ON_ERROR), t.continue_on_error as u16);
        i.u32(l.at(FIRST_ERROR), t.first_error as u32);
        i.u64(l.at(TOTAL_ERR_COUNT), t.total_err_count);
        i.u64(l.at(NR_ZONE_RESETS), 0);
        if l.zone_at_end {
            i.u16(l.count_zone_resets(), 0);
        }
        i.u32(l.at(KB_BASE), t.cfg.kb_base);
        i.u32(
            l.at(UNIT_BASE),
            if t.cfg.bits {
                N2S_BITPERSEC
            } else {
                N2S_BYTEPERSEC
            },
        );
        i.u32(l.at(LATENCY_DEPTH), t.latency_depth);
        i.u64(l.at(LATENCY_TARGET), t.latency_target);
        i.f64(l.at(LATENCY_PERCENTILE), t.latency_percentile);
        i.u64(l.at(LATENCY_WINDOW), t.latency_window);
        i.u32(l.at(SIG_FIGS), t.cfg.sig_figs);
        let gs = WireGs::encode(g);
        img.0[l.ts_len..l.ts_len + GS_LEN].copy_from_slice(&gs);
        if let Some(ss) = &t.steady {
            put_steady(&l, &mut img, ss);
        }
        img.0
    }

    /// Reads a TS payload of fio 3.33's layout into iobench's statistics.
    pub fn decode(b: &[u8]) -> Result<WireTs, ProtoError> {
        Self::decode_as(Proto::OLDEST, b)
    }

    /// [`WireTs::decode`] of a payload in the layout of protocol version `p`.
    pub fn decode_as(p: Proto, b: &[u8]) -> Result<WireTs, ProtoError> {
        let l = Layout::of(p);
        let f = Fields::new(b, "TS", l.ts_len + GS_LEN)?;
        let mut cfg = StatsConfig {
            clat_percentiles: f.u32(l.at(CLAT_PCT))? != 0,
            lat_percentiles: f.u32(l.at(LAT_PCT))? != 0,
            slat_percentiles: f.u32(l.at(SLAT_PCT))? != 0,
            kb_base: f.u32(l.at(KB_BASE))?,
            bits: f.u32(l.at(UNIT_BASE))? == N2S_BITPERSEC,
            sig_figs: f.u32(l.at(SIG_FIGS))?,
            unified: unified_of(f.u32(l.at(UNIFIED))?),
            ..StatsConfig::default()
        };
        let mut list = Vec::new();
        for k in 0..LIST_MAX {
            let p = f.f64(l.at(PCT_LIST) + k * FP64)?;
            if p == 0.0 || !p.is_finite() {
                break;
            }
            list.push(p);
        }
        cfg.percentiles = PercentileList {
            list,
            precision: f.u64(l.at(PCT_PRECISION))?.min(16) as usize,
        };
        let name = f.cstr(l.at(NAME), 128)?;
        let mut t = JobStats::new(&name, f.u32(l.at(GROUPID))?, cfg);
        t.verror = f.cstr(l.at(VERROR), 128)?;
        t.error = f.u32(l.at(ERROR))? as i32;
        t.pid = f.u32(l.at(PID))?;
        let desc = f.cstr(l.at(DESCRIPTION), 256)?;
        t.description = (!desc.is_empty()).then_some(desc);
        t.jobs = f.u32(l.at(MEMBERS))?;
        if p.job_start() {
            t.job_start = f.u64(JOB_START)?;
        }
        t.sync = get_io_stat(&f, l.at(SYNC_STAT))?;
        let hist_at = |off: usize| -> Result<Hist, ProtoError> {
            let mut v = Vec::with_capacity(PLAT_NR);
            let mut any = false;
            for k in 0..PLAT_NR {
                let c = f.u64(off + 8 * k)?;
                any |= c != 0;
                v.push(c);
            }
            Ok(if any {
                Hist::from_buckets(v)
            } else {
                Hist::default()
            })
        };
        for d in 0..3 {
            let dir = &mut t.dir[d];
            dir.clat = get_io_stat(&f, l.at(CLAT_STAT) + d * IO_STAT)?;
            dir.slat = get_io_stat(&f, l.at(SLAT_STAT) + d * IO_STAT)?;
            dir.lat = get_io_stat(&f, l.at(LAT_STAT) + d * IO_STAT)?;
            dir.bw = get_io_stat(&f, l.at(BW_STAT) + d * IO_STAT)?;
            dir.iops = get_io_stat(&f, l.at(IOPS_STAT) + d * IO_STAT)?;
            dir.ios = f.u64(l.at(TOTAL_IO_U) + 8 * d)?;
            dir.short = f.u64(l.at(SHORT_IO_U) + 8 * d)?;
            dir.dropped = f.u64(l.at(DROP_IO_U) + 8 * d)?;
            dir.bytes = f.u64(l.at(IO_BYTES) + 8 * d)?;
            dir.runtime_ms = f.u64(l.at(RUNTIME) + 8 * d)?;
            for k in 0..3 {
                dir.hist[k] = hist_at(l.at(IO_U_PLAT) + ((k * 3 + d) * PLAT_NR) * 8)?;
            }
        }
        t.sync_ios = f.u64(l.at(TOTAL_IO_U) + 24)?;
        t.sync_hist = hist_at(l.at(IO_U_SYNC_PLAT))?;
        t.usr_ms = f.u64(l.at(USR_TIME))?;
        t.sys_ms = f.u64(l.at(SYS_TIME))?;
        t.ctx = f.u64(l.at(CTX))?;
        t.minf = f.u64(l.at(MINF))?;
        t.majf = f.u64(l.at(MAJF))?;
        for k in 0..MAP_NR {
            t.depth_map[k] = f.u64(l.at(IO_U_MAP) + 8 * k)?;
            t.submit_map[k] = f.u64(l.at(IO_U_SUBMIT) + 8 * k)?;
            t.complete_map[k] = f.u64(l.at(IO_U_COMPLETE) + 8 * k)?;
        }
        for k in 0..LAT_N_NR {
            t.lat_n[k] = f.u64(l.at(IO_U_LAT_N) + 8 * k)?;
        }
        for k in 0..LAT_U_NR {
            t.lat_u[k] = f.u64(l.at(IO_U_LAT_U) + 8 * k)?;
        }
        for k in 0..LAT_M_NR {
            t.lat_m[k] = f.u64(l.at(IO_U_LAT_M) + 8 * k)?;
        }
        t.total_submit = f.u64(l.at(TOTAL_SUBMIT))?;
        t.total_complete = f.u64(l.at(TOTAL_COMPLETE))?;
        t.total_run_ms = f.u64(l.at(TOTAL_RUN_TIME))?;
        t.continue_on_error = f.u16(l.at(CONTINUE_ON_ERROR))? != 0;
        t.first_error = f.u32(l.at(FIRST_ERROR))? as i32;
        t.total_err_count = f.u64(l.at(TOTAL_ERR_COUNT))?;
        t.latency_depth = f.u32(l.at(LATENCY_DEPTH))?;
        t.latency_target = f.u64(l.at(LATENCY_TARGET))?;
        t.latency_percentile = f.f64(l.at(LATENCY_PERCENTILE))?;
        t.latency_window = f.u64(l.at(LATENCY_WINDOW))?;
        t.failed = t.error != 0 && !t.continue_on_error;
        t.steady = get_steady(&l, &f)?;
        let group = WireGs::decode(&b[l.ts_len..])?;
        Ok(WireTs {
            stats: t,
            thread_number: f.u32(l.at(THREAD_NUMBER))?,
            group,
        })
    }
}

/// Appends a job's steady-state window after the TS payload, as fio sends its rings:
/// IOPS then bandwidth, `ss_dur` values each, oldest first (head 0).
fn put_steady(l: &Layout, img: &mut Image, ss: &crate::stats::steady::SteadyReport) {
    use crate::defs::steady::Measure;
    let c = &ss.spec.criterion;
    let dur = ss.spec.dur_s as usize;
    let mut state = SS_DATA;
    state |= match c.measure {
        Measure::Iops => SS_IOPS,
        Measure::Bw => SS_BW,
        Measure::Lat => SS_LAT,
    };
    if c.slope {
        state |= SS_SLOPE_F;
    }
    if c.pct {
        state |= SS_PCT;
    }
    if ss.attained {
        state |= SS_ATTAINED;
    }
    let i = img;
    i.u64(l.at(SS_DUR), dur as u64);
    i.u32(l.at(SS_STATE), state);
    i.u32(l.at(SS_HEAD), 0);
    i.f64(l.at(SS_LIMIT), c.limit);
    // iobench reports these at fio's float precision.
    i.f64(l.at(SS_SLOPE), ss.slope as f32 as f64);
    i.f64(l.at(SS_DEVIATION), ss.deviation as f32 as f64);
    i.f64(l.at(SS_CRITERION), ss.criterion);
    let at = i.0.len();
    i.u64(l.at(SS_IOPS_OFFSET), at as u64);
    i.u64(l.at(SS_BW_OFFSET), (at + 8 * dur) as u64);
    // From version 115 the intervals' mean latencies follow (zeros unless measured).
    let rings: &[&Vec<u64>] = if l.ss_lat {
        i.u64(l.ss_lat_offset(), (at + 16 * dur) as u64);
        &[&ss.iops, &ss.bw, &ss.lat]
    } else {
        &[&ss.iops, &ss.bw]
    };
    for ring in rings {
        for k in 0..dur {
            let v = ring.get(k).copied().unwrap_or(0);
            i.0.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A peer's steady-state window, when it sent one.
fn get_steady(
    l: &Layout,
    f: &Fields,
) -> Result<Option<crate::stats::steady::SteadyReport>, ProtoError> {
    use crate::defs::steady::{Criterion, Measure};
    use crate::job::exec::SteadySpec;
    use crate::stats::steady::SteadyReport;
    let dur = f.u64(l.at(SS_DUR))?;
    let state = f.u32(l.at(SS_STATE))?;
    if dur == 0 || state & SS_DATA == 0 {
        return Ok(None);
    }
    if dur > SS_MAX_DUR {
        return Err(ProtoError::Malformed {
            op: "TS",
            why: format!("steady-state window of {dur} samples"),
        });
    }
    let dur = dur as usize;
    let head = f.u32(l.at(SS_HEAD))? as usize % dur;
    let first = if state & SS_ATTAINED != 0 || state & SS_BUFFER_FULL == 0 {
        head
    } else {
        (head + dur - 1) % dur
    };
    let ring = |off: usize| -> Result<Vec<u64>, ProtoError> {
        (0..dur)
            .map(|l| f.u64(off + 8 * ((first + l) % dur)))
            .collect()
    };
    let iops = ring(f.u64(l.at(SS_IOPS_OFFSET))? as usize)?;
    let bw = ring(f.u64(l.at(SS_BW_OFFSET))? as usize)?;
    let lat = if l.ss_lat {
        ring(f.u64(l.ss_lat_offset())? as usize)?
    } else {
        Vec::new()
    };
    let measure = if state & SS_IOPS != 0 {
        Measure::Iops
    } else if state & SS_LAT != 0 {
        Measure::Lat
    } else {
        Measure::Bw
    };
    Ok(Some(SteadyReport {
        spec: SteadySpec {
            criterion: Criterion {
                measure,
                slope: state & SS_SLOPE_F != 0,
                pct: state & SS_PCT != 0,
                limit: f.f64(l.at(SS_LIMIT))?,
            },
            dur_s: dur as u32,
            ramp_ms: 0,
            // fio 3.33's wire format carries one sample a second.
            interval_ms: 1000,
        },
        attained: state & SS_ATTAINED != 0,
        slope: f.f64(l.at(SS_SLOPE))?,
        deviation: f.f64(l.at(SS_DEVIATION))?,
        criterion: f.f64(l.at(SS_CRITERION))?,
        iops,
        bw,
        lat,
    }))
}

/// A GS message (`struct group_run_stats`), or the group part of a TS.
#[derive(Debug, Clone, PartialEq)]
pub struct WireGs(pub GroupStats);

impl WireGs {
    pub fn encode(g: &GroupStats) -> Vec<u8> {
        let mut i = Image::new(GS_LEN);
        for d in 0..3 {
            i.u64(8 * d, g.max_run[d]);
            // fio sends a group with no I/O in a direction with its initial values.
            i.u64(24 + 8 * d, g.min_run[d]);
            i.u64(48 + 8 * d, g.max_bw[d]);
            i.u64(72 + 8 * d, g.min_bw[d]);
            i.u64(96 + 8 * d, g.io_bytes[d]);
            i.u64(120 + 8 * d, g.agg[d]);
        }
        i.u32(144, g.kb_base);
        i.u32(
            148,
            if g.bits {
                N2S_BITPERSEC
            } else {
                N2S_BYTEPERSEC
            },
        );
        i.u32(152, g.sig_figs);
        i.u32(156, g.groupid);
        i.u32(160, unified_code(g.unified));
        i.0
    }

    pub fn decode(b: &[u8]) -> Result<WireGs, ProtoError> {
        let f = Fields::new(b, "GS", GS_LEN)?;
        let mut g = GroupStats {
            groupid: f.u32(156)?,
            min_run: [0; 3],
            max_run: [0; 3],
            min_bw: [0; 3],
            max_bw: [0; 3],
            io_bytes: [0; 3],
            agg: [0; 3],
            kb_base: f.u32(144)?,
            bits: f.u32(148)? == N2S_BITPERSEC,
            sig_figs: f.u32(152)?,
            unified: unified_of(f.u32(160)?),
        };
        for d in 0..3 {
            g.max_run[d] = f.u64(8 * d)?;
            g.min_run[d] = f.u64(24 + 8 * d)?;
            g.max_bw[d] = f.u64(48 + 8 * d)?;
            g.min_bw[d] = f.u64(72 + 8 * d)?;
            g.io_bytes[d] = f.u64(96 + 8 * d)?;
            g.agg[d] = f.u64(120 + 8 * d)?;
        }
        Ok(WireGs(g))
    }
}

/// A DU message: one device's counters and, for md/dm devices, the members' averages.
#[derive(Debug, Clone, PartialEq)]
pub struct WireDu(pub DiskUtil);

impl WireDu {
    /// `elapsed_ms` is the time the counters cover; fio's client computes the utilisation
    /// from it (busy time / elapsed time), so it is chosen to give back `d.util`.
    pub fn encode(d: &DiskUtil, elapsed_ms: u64) -> Vec<u8> {
        let mut i = Image::new(DU_LEN);
        i.cstr(0, 64, &d.name);
        let s = &d.stat;
        for k in 0..2 {
            i.u64(64 + 8 * k, s.ios[k]);
            i.u64(80 + 8 * k, s.merges[k]);
            i.u64(96 + 8 * k, s.sectors[k]);
            i.u64(112 + 8 * k, s.ticks[k]);
        }
        i.u64(128, s.io_ticks);
        i.u64(136, s.time_in_queue);
        let msec = if d.util > 0.0 && s.io_ticks > 0 {
            ((s.io_ticks as f64 * 100.0) / d.util).round().max(1.0) as u64
        } else {
            elapsed_ms.max(1)
        };
        i.u64(144, msec);
        const AGG: usize = 152;
        if let Some(a) = &d.aggr {
            for k in 0..2 {
                i.u64(AGG + 8 * k, a.ios[k]);
                i.u64(AGG + 16 + 8 * k, a.merges[k]);
                i.u64(AGG + 48 + 8 * k, a.ticks[k]);
            }
            i.u64(AGG + 72, a.in_queue);
            // The averages are already taken: one "member" divides by one.
            i.u32(AGG + 80, 1);
            i.f64(AGG + 88, a.max_util);
        }
        i.0
    }

    pub fn decode(b: &[u8]) -> Result<WireDu, ProtoError> {
        let f = Fields::new(b, "DU", DU_LEN)?;
        let mut s = RawDiskStat::default();
        for k in 0..2 {
            s.ios[k] = f.u64(64 + 8 * k)?;
            s.merges[k] = f.u64(80 + 8 * k)?;
            s.sectors[k] = f.u64(96 + 8 * k)?;
            s.ticks[k] = f.u64(112 + 8 * k)?;
        }
        s.io_ticks = f.u64(128)?;
        s.time_in_queue = f.u64(136)?;
        let msec = f.u64(144)?;
        let util = if msec > 0 {
            (100.0 * s.io_ticks as f64 / msec as f64).min(100.0)
        } else {
            0.0
        };
        const AGG: usize = 152;
        // fio sends the members' sums; iobench keeps their averages.
        let members = f.u32(AGG + 80)? as u64;
        let avg = |v: u64| v.checked_div(members).unwrap_or(0);
        let aggr = if members > 0 {
            let mut a = Aggregate::default();
            for k in 0..2 {
                a.ios[k] = avg(f.u64(AGG + 8 * k)?);
                a.merges[k] = avg(f.u64(AGG + 16 + 8 * k)?);
                a.ticks[k] = avg(f.u64(AGG + 48 + 8 * k)?);
            }
            a.in_queue = avg(f.u64(AGG + 72)?);
            a.max_util = f.f64(AGG + 88)?;
            Some(a)
        } else {
            None
        };
        Ok(WireDu(DiskUtil {
            name: f.cstr(0, 64)?,
            stat: s,
            util,
            aggr,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defs::Ddir;

    #[test]
    fn the_latency_ring_offset_sits_where_fio_342_has_it() {
        // offsetof(struct thread_stat, ...) in fio 3.42 (protocol 120), compiled against
        // its headers: ss_iops_data_offset 183824, ss_bw_data_offset 183832,
        // ss_lat_data_offset 183840, clat_prio 183848. A fio 3.42 client read the ring
        // from 183840 and found none where iobench had put it at 183848.
        let l = Layout::of(Proto::new(120).unwrap());
        assert_eq!(l.at(SS_IOPS_OFFSET), 183_824);
        assert_eq!(l.at(SS_BW_OFFSET), 183_832);
        assert_eq!(l.ss_lat_offset(), 183_840);
    }

    #[test]
    fn thread_stat_round_trips() {
        let mut t = JobStats::new("job1", 0, StatsConfig::default());
        for k in 1..=1000u64 {
            t.record_io(Ddir::Read, 4096, 100 + k, 10_000 + k * 7, k * 1_000_000);
        }
        t.record_sync(5000);
        t.jobs = 1;
        t.pid = 42;
        t.usr_ms = 3;
        let mut g = GroupStats {
            groupid: 0,
            min_run: [10, 0, 0],
            max_run: [10, 0, 0],
            min_bw: [400, 0, 0],
            max_bw: [400, 0, 0],
            io_bytes: [4096 * 1000, 0, 0],
            agg: [400, 0, 0],
            kb_base: 1024,
            bits: false,
            sig_figs: 4,
            unified: Unified::None,
        };
        let b = WireTs::encode(&t, 1, &g);
        assert_eq!(b.len(), TS_PDU_LEN);
        // A steady-state window travels after the struct, as fio's rings do.
        let ss = crate::stats::steady::SteadyReport {
            spec: crate::job::exec::SteadySpec {
                criterion: crate::defs::steady::Criterion {
                    measure: crate::defs::steady::Measure::Iops,
                    slope: false,
                    pct: true,
                    limit: 5.0,
                },
                dur_s: 3,
                ramp_ms: 0,
                interval_ms: 1000,
            },
            attained: true,
            slope: 0.5,
            deviation: 2.0,
            criterion: 1.25,
            iops: vec![10, 20, 30],
            bw: vec![40, 50, 60],
            lat: Vec::new(),
        };
        let mut with_ss = t.clone();
        with_ss.steady = Some(ss.clone());
        let b2 = WireTs::encode(&with_ss, 1, &g);
        assert_eq!(b2.len(), TS_PDU_LEN + 48);
        assert_eq!(WireTs::decode(&b2).unwrap().stats.steady, Some(ss));
        assert!(
            WireTs::decode(&b2[..TS_PDU_LEN + 20]).is_err(),
            "rings cut short"
        );
        let w = WireTs::decode(&b).unwrap();
        assert_eq!(w.thread_number, 1);
        assert_eq!(w.stats.name, "job1");
        assert_eq!(w.stats.pid, 42);
        assert_eq!(w.stats.dir[0].ios, 1000);
        assert_eq!(w.stats.dir[0].clat, t.dir[0].clat);
        assert_eq!(w.stats.dir[0].hist[1], t.dir[0].hist[1]);
        assert_eq!(w.stats.sync, t.sync);
        assert_eq!(w.stats.cfg.percentiles, t.cfg.percentiles);
        g.min_run = [10, 0, 0];
        assert_eq!(w.group.0, g);
        assert!(WireTs::decode(&b[..1000]).is_err());
    }

    /// The layouts of the later versions, at the offsets `offsetof` gives on fio's own
    /// headers (3.36, the zone-reset move of 114, master).
    #[test]
    fn thread_stat_layout_follows_the_version() {
        let mut t = JobStats::new("job1", 0, StatsConfig::default());
        t.record_io(Ddir::Read, 4096, 100, 10_000, 1_000_000);
        t.job_start = 1_700_000_000_123;
        t.latency_depth = 7;
        t.cfg.kb_base = 1000;
        let g = GroupStats::new(0);
        let le32 = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let le64 = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        for (v, len, pid, kb, depth) in [
            (97u16, 184_056usize, 268usize, 183_680usize, 183_688usize),
            (101, 184_064, 276, 183_688, 183_696),
            (113, 184_064, 276, 183_688, 183_696),
            (114, 184_064, 276, 183_680, 183_700),
            (121, 184_072, 276, 183_680, 183_700),
        ] {
            let p = Proto::new(v).unwrap();
            let mut t = t.clone();
            t.pid = 4242;
            let b = WireTs::encode_as(p, &t, 3, &g);
            assert_eq!(b.len(), len, "version {v}");
            assert_eq!(le32(&b, pid), 4242, "pid, version {v}");
            assert_eq!(le32(&b, kb), 1000, "kb_base, version {v}");
            assert_eq!(le32(&b, depth), 7, "latency_depth, version {v}");
            if v >= 101 {
                assert_eq!(le64(&b, 268), t.job_start, "job_start, version {v}");
            }
            let back = WireTs::decode_as(p, &b).unwrap();
            assert_eq!(back.stats.pid, 4242);
            assert_eq!(back.stats.dir[0].ios, 1);
            assert_eq!(back.stats.latency_depth, 7);
            assert_eq!(back.stats.cfg.kb_base, 1000);
            assert_eq!(back.stats.job_start, if v >= 101 { t.job_start } else { 0 });
            assert_eq!(back.thread_number, 3);
        }
        // Every version decodes what it encodes, steady-state rings included (three of
        // them from 115 on, the third the latency criterion's; older ones carry no
        // latency, and fio 3.42's flag for it).
        let mut with_ss = t.clone();
        with_ss.steady = Some(crate::stats::steady::SteadyReport {
            spec: crate::job::exec::SteadySpec {
                criterion: crate::defs::steady::Criterion {
                    measure: crate::defs::steady::Measure::Lat,
                    slope: true,
                    pct: false,
                    limit: 0.5,
                },
                dur_s: 2,
                ramp_ms: 0,
                interval_ms: 1000,
            },
            attained: false,
            slope: 0.25,
            deviation: 1.0,
            criterion: 0.125,
            iops: vec![1, 2],
            bw: vec![3, 4],
            lat: vec![52_000, 48_000],
        });
        for v in Proto::OLDEST.number()..=Proto::NEWEST.number() {
            let p = Proto::new(v).unwrap();
            let b = WireTs::encode_as(p, &with_ss, 1, &g);
            let rings = if p.ss_lat() { 3 } else { 2 };
            assert_eq!(b.len(), Layout::of(p).pdu_len() + rings * 16, "version {v}");
            let mut want = with_ss.steady.clone();
            if !p.ss_lat() {
                want.as_mut().unwrap().lat.clear();
            }
            assert_eq!(
                WireTs::decode_as(p, &b).unwrap().stats.steady,
                want,
                "version {v}"
            );
        }
    }

    #[test]
    fn disk_util_round_trips() {
        let d = DiskUtil {
            name: "vda".into(),
            stat: RawDiskStat {
                ios: [10, 20],
                merges: [1, 2],
                sectors: [80, 160],
                ticks: [5, 6],
                io_ticks: 50,
                time_in_queue: 11,
            },
            util: 25.0,
            aggr: None,
        };
        let w = WireDu::decode(&WireDu::encode(&d, 1000)).unwrap();
        assert_eq!(w.0, d);
    }
}
