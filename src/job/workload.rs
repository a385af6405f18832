//! What I/O a job issues: the pattern, block sizes, where and how much, randomness, zones
//! and iologs, resolved into typed values with fio's defaults.

use crate::defs::reader::Reader;
use crate::defs::value::per_dir;
pub use crate::defs::value::Distribution;
use crate::defs::value::SizeSpec;
use crate::defs::OptDef;
use crate::defs::{Ddir, Pattern};
use crate::error::JobError;
use crate::options::table::{
    ALLRANDREPEAT, BA, BS, BSRANGE, BSSPLIT, BS_IS_SEQ_RAND, BS_UNALIGNED, CREATE_SERIALIZE,
    FILE_SERVICE_TYPE, FILL_DEVICE, IGNORE_ZONE_LIMITS, IO_SIZE, JOB_MAX_OPEN_ZONES, LOOPS,
    MAX_OPEN_ZONES, MERGE_BLKTRACE_FILE, MERGE_BLKTRACE_ITERS, MERGE_BLKTRACE_SCALARS, NORANDOMMAP,
    NUMBER_IOS, OFFSET, OFFSET_ALIGN, OFFSET_INCREMENT, OPENFILES, PERCENTAGE_RANDOM,
    RANDOM_DISTRIBUTION, RANDOM_GENERATOR, RANDREPEAT, RANDSEED, READ_BEYOND_WP, READ_IOLOG,
    READ_IOLOG_CHUNKED, REPLAY_ALIGN, REPLAY_NO_STALL, REPLAY_REDIRECT, REPLAY_SCALE, REPLAY_SKIP,
    REPLAY_TIME_SCALE, RW, RWMIXREAD, RWMIXWRITE, RW_SEQUENCER, SIZE, SOFTRANDOMMAP, SPRANDOM,
    SPR_CS, SPR_NUM_REGIONS, SPR_OP, WRITE_IOLOG, ZONECAPACITY, ZONEMODE, ZONERANGE, ZONESIZE,
    ZONESKIP, ZONE_RESET_FREQUENCY, ZONE_RESET_THRESHOLD,
};

/// How `rw_sequencer` fills the I/Os between the `:N` random ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwSequencer {
    Sequential,
    Identical,
}

/// The settings of a job's `sprandom`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpRandomOpts {
    /// `spr_op`: the over-provisioning ratio.
    pub over_provisioning: f64,
    /// `spr_num_regions`.
    pub num_regions: u32,
    /// `spr_cs`: the device cache size in bytes (0: no cache to step round).
    pub cache_size: u64,
}

/// `random_generator=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomGenerator {
    Tausworthe,
    Lfsr,
    Tausworthe64,
}

/// `file_service_type=`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileService {
    RoundRobin(u32),
    Sequential(u32),
    Random(u32),
    Zipf { theta: f64, center: Option<f64> },
    Pareto { h: f64, center: Option<f64> },
    Normal { dev: f64, center: Option<f64> },
}

/// The iolog replay options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    pub read_iolog: Option<String>,
    pub write_iolog: Option<String>,
    pub no_stall: bool,
    /// Percent: 100 replays at the recorded pace, 200 twice as fast.
    pub time_scale: u64,
    pub redirect: Option<String>,
    pub align: u64,
    pub scale: u64,
    /// `read_iolog_chunked`: stream the log during the run instead of loading it first.
    pub chunked: bool,
    /// `replay_skip`, as bits `1 << n` for read 0, write 1, trim 2, sync 3. fio 3.33 only
    /// applies it to blktrace replays; version 2/3 iologs replay every entry regardless.
    pub skip: u8,
}

/// `merge_blktrace_file`: merges the `read_iolog` traces into that file (when the job is
/// read, as fio does, so `--merge-blktrace-only` needs nothing more) and replays it.
/// Without it, `read_iolog` as given.
fn merged_blktrace(r: &Reader) -> Result<Option<String>, JobError> {
    let list = r.text(&READ_IOLOG);
    let Some(out) = r.text(&MERGE_BLKTRACE_FILE).filter(|s| !s.is_empty()) else {
        return Ok(list);
    };
    // Nothing to merge without traces: the job runs as it would without the option.
    let Some(list) = list else {
        return Ok(None);
    };
    let floats = |def: &OptDef| -> Result<Vec<f64>, JobError> {
        r.text(def)
            .map(|v| crate::defs::value::parse_float_list(&v).map_err(|e| r.invalid(def, e)))
            .transpose()
            .map(Option::unwrap_or_default)
    };
    let inputs: Vec<&str> = list.split(':').filter(|s| !s.is_empty()).collect();
    crate::blktrace::merge(
        &inputs,
        &floats(&MERGE_BLKTRACE_SCALARS)?,
        &floats(&MERGE_BLKTRACE_ITERS)?,
        &out,
    )
    .map_err(|e| r.invalid(&MERGE_BLKTRACE_FILE, e))?;
    Ok(Some(out))
}

/// Parses `replay_skip=kind[,kind...]` (read, write, trim, sync) into [`Replay::skip`] bits.
pub fn parse_replay_skip(v: &str) -> Result<u8, String> {
    let mut bits = 0u8;
    for k in v.trim().split(',') {
        bits |= match k {
            "read" => 1,
            "write" => 2,
            "trim" => 4,
            "sync" => 8,
            _ => {
                return Err(format!(
                    "unknown kind '{k}' in '{v}' (expected a comma-separated list of read, write, trim, sync)"
                ))
            }
        };
    }
    Ok(bits)
}

/// The resolved workload options.
#[derive(Debug, Clone)]
pub struct Workload {
    pub pattern: Pattern,
    /// `rw=…:N` for a sequential pattern: bytes added between I/Os (may be negative).
    pub seq_add: i64,
    /// `rw=…:N` for a random pattern: a new random offset every N I/Os.
    pub seq_nr: u32,
    pub rw_sequencer: RwSequencer,
    /// `rwmixread`: the read share of a mixed job, in percent.
    pub rwmix_read: u32,
    /// `percentage_random` per direction.
    pub perc_rand: [u32; 3],
    /// Block size range per direction (min, max), in bytes.
    pub bs: [(u64, u64); 3],
    /// `bssplit` per direction: (size, percent), sorted by percent as fio sorts it.
    pub bssplit: [Vec<(u64, u32)>; 3],
    pub bs_unaligned: bool,
    pub bs_is_seq_rand: bool,
    /// `blockalign` per direction; 0 when not set.
    pub blockalign: [u64; 3],
    pub size: Option<SizeSpec>,
    pub io_size: Option<SizeSpec>,
    pub offset: SizeSpec,
    pub offset_align: Option<u64>,
    pub offset_increment: Option<SizeSpec>,
    pub number_ios: u64,
    pub loops: u32,
    pub fill_device: bool,
    /// `zonemode=strided` with `zonesize`, `zonerange`, `zoneskip` (0 when not strided).
    pub zone_size: u64,
    pub zone_range: u64,
    pub zone_skip: u64,
    /// `zonemode=zbd` and its zone options (`None` for the other zone modes).
    pub zbd: Option<ZbdOptions>,
    pub file_service: FileService,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub allrandrepeat: bool,
    /// The dialect's seeding rules (fio 3.35 changed them; see `gen::rand::seed_table`).
    pub release: crate::defs::release::FioRelease,
    pub norandommap: bool,
    pub softrandommap: bool,
    pub random_generator: RandomGenerator,
    /// True when the user chose the generator (fio switches to 64-bit only otherwise).
    pub random_generator_set: bool,
    pub distribution: Distribution,
    pub replay: Replay,
    /// `sprandom=1` and its settings (fio 3.41); `None` without.
    pub sprandom: Option<SpRandomOpts>,
    /// What fio prints when `sprandom` sets the generator and the random map for the job
    /// (`fio: sprandom sets random_generator=lfsr`), before the job's header line.
    pub notes: Vec<&'static str>,
}

/// Reads `word:postfix` distribution parameters: `1.2` or `1.2:0.5` (value, center).
fn value_center(
    r: &Reader,
    def: &OptDef,
    post: Option<&str>,
    default: f64,
) -> Result<(f64, Option<f64>), JobError> {
    let Some(post) = post else {
        return Ok((default, None));
    };
    let (v, c) = match post.split_once(':') {
        Some((v, c)) => (v, Some(c)),
        None => (post, None),
    };
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| r.invalid(def, format!("'{v}' is not a number")))?;
    let c = match c {
        None => None,
        Some(c) => {
            let c: f64 = c
                .trim()
                .parse()
                .map_err(|_| r.invalid(def, format!("'{c}' is not a number")))?;
            if !(0.0..=1.0).contains(&c) {
                return Err(r.invalid(def, "the center must be between 0 and 1"));
            }
            Some(c)
        }
    };
    Ok((v, c))
}

fn split_word(text: &str) -> (&str, Option<&str>) {
    match text.split_once(':') {
        Some((w, p)) => (w.trim(), Some(p.trim())),
        None => (text.trim(), None),
    }
}

impl Workload {
    pub fn resolve(r: &Reader) -> Result<Self, JobError> {
        let rw_text = r.string(&RW);
        let (rw_word, rw_post) = split_word(&rw_text);
        let pattern = match rw_word {
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
            other => return Err(r.invalid(&RW, format!("unknown pattern '{other}'"))),
        };
        let (mut seq_add, mut seq_nr) = (0i64, 1u32);
        if let Some(post) = rw_post.filter(|p| !p.is_empty()) {
            if pattern.is_random() {
                seq_nr = post
                    .parse()
                    .map_err(|_| r.invalid(&RW, format!("'{post}' is not a count")))?;
            } else {
                let (neg, body) = match post.strip_prefix('-') {
                    Some(b) => (true, b),
                    None => (false, post),
                };
                let v = r.size_of(body, &RW)? as i64;
                seq_add = if neg { -v } else { v };
            }
        }
        let rw_sequencer = match r.choice(&RW_SEQUENCER).as_deref() {
            None | Some("sequential") => RwSequencer::Sequential,
            Some("identical") => RwSequencer::Identical,
            Some(o) => return Err(r.invalid(&RW_SEQUENCER, format!("unknown value '{o}'"))),
        };
        let rwmix_read = if r.is_set(&RWMIXREAD) {
            r.num(&RWMIXREAD)?
        } else if r.is_set(&RWMIXWRITE) {
            100 - r.num(&RWMIXWRITE)?
        } else {
            50
        };
        if !(0..=100).contains(&rwmix_read) {
            return Err(r.invalid(&RWMIXREAD, "must be between 0 and 100"));
        }

        let mut perc_rand = [100u32; 3];
        if let Some(t) = r.text(&PERCENTAGE_RANDOM) {
            for (slot, p) in perc_rand.iter_mut().zip(per_dir(&t)) {
                if let Some(p) = p {
                    let v = p.parse::<u32>().map_err(|_| {
                        r.invalid(&PERCENTAGE_RANDOM, format!("'{p}' is not a percentage"))
                    })?;
                    *slot = v.min(100);
                }
            }
        }

        let mut bs = [(4096u64, 4096u64); 3];
        let bs_text = r.string(&BS);
        for (slot, p) in bs.iter_mut().zip(per_dir(&bs_text)) {
            if let Some(p) = p {
                let v = r.size_of(p, &BS)?;
                *slot = (v, v);
            }
        }
        if let Some(range) = r.text(&BSRANGE) {
            for (slot, p) in bs.iter_mut().zip(per_dir(&range)) {
                if let Some(p) = p {
                    let (a, b) = p.split_once(['-', ':']).unwrap_or((p, p));
                    let (a, b) = (r.size_of(a, &BSRANGE)?, r.size_of(b, &BSRANGE)?);
                    *slot = (a.min(b), a.max(b));
                }
            }
        }
        let mut bssplit: [Vec<(u64, u32)>; 3] = Default::default();
        if let Some(t) = r.text(&BSSPLIT) {
            for (d, p) in per_dir(&t).into_iter().enumerate() {
                if let Some(p) = p {
                    bssplit[d] = parse_bssplit(r, p)?;
                    if let (Some(min), Some(max)) = (
                        bssplit[d].iter().map(|e| e.0).min(),
                        bssplit[d].iter().map(|e| e.0).max(),
                    ) {
                        bs[d] = (min, max);
                    }
                }
            }
        }
        for (min, _) in bs {
            if min == 0 {
                return Err(r.invalid(&BS, "block size must not be zero"));
            }
        }
        let mut blockalign = [0u64; 3];
        if let Some(t) = r.text(&BA) {
            for (slot, p) in blockalign.iter_mut().zip(per_dir(&t)) {
                if let Some(p) = p {
                    *slot = r.size_of(p, &BA)?;
                }
            }
        }

        let zonemode = r.word(&ZONEMODE);
        let zone_size = r.bytes(&ZONESIZE)?;
        let (mut zs, mut zr, mut zk) = (0, 0, 0);
        let mut zbd = None;
        match zonemode.as_str() {
            "none" if zone_size != 0 => {
                return Err(r.invalid(
                    &ZONESIZE,
                    "zonemode=none (the default) does not take a zonesize; add zonemode=strided",
                ));
            }
            "strided" => {
                if zone_size == 0 {
                    return Err(r.invalid(&ZONESIZE, "zonemode=strided needs a zonesize"));
                }
                zs = zone_size;
                zr = r.size(&ZONERANGE)?.filter(|&v| v != 0).unwrap_or(zone_size);
                zk = r.size_or_zones(&ZONESKIP)?.unwrap_or(0);
            }
            "zbd" => zbd = Some(ZbdOptions::resolve(r, zone_size, pattern, &bs)?),
            "none" => {}
            other => {
                return Err(r.invalid(
                    &ZONEMODE,
                    format!("'{other}' is not one of none, strided, zbd"),
                ))
            }
        }

        // fio turns strided zones off for a job that may keep more than one file open
        // (set with openfiles: only then is it above one at that point).
        if zs != 0 && r.num(&OPENFILES)? > 1 {
            (zs, zr, zk) = (0, 0, 0);
        }

        let file_service = parse_file_service(r)?;
        let distribution = parse_distribution(r)?;
        let mut random_generator = match r.choice(&RANDOM_GENERATOR).as_deref() {
            None | Some("tausworthe") => RandomGenerator::Tausworthe,
            Some("lfsr") => RandomGenerator::Lfsr,
            Some("tausworthe64") => RandomGenerator::Tausworthe64,
            Some(o) => return Err(r.invalid(&RANDOM_GENERATOR, format!("unknown generator '{o}'"))),
        };
        let randseed = if r.is_set(&RANDSEED) {
            let t = r.string(&RANDSEED);
            Some(
                r.size_of(&t, &RANDSEED)
                    .map_err(|_| r.invalid(&RANDSEED, format!("'{t}' is not a number")))?,
            )
        } else {
            None
        };
        // From fio 3.35 on `allrandrepeat` is another name of `randrepeat`: whichever of
        // the two is set last wins, and nothing seeds apart from it any more.
        let (randrepeat, allrandrepeat) = if r.raw.release.randseed_overrides_randrepeat() {
            let last = |d: &OptDef| r.raw.opts.iter().rposition(|o| o.def.name == d.name);
            let v = match (last(&RANDREPEAT), last(&ALLRANDREPEAT)) {
                (Some(a), Some(b)) if b > a => r.bool(&ALLRANDREPEAT)?,
                (None, Some(_)) => r.bool(&ALLRANDREPEAT)?,
                _ => r.bool(&RANDREPEAT)?,
            };
            (v, false)
        } else {
            (r.bool(&RANDREPEAT)?, r.bool(&ALLRANDREPEAT)?)
        };
        let replay = Replay {
            read_iolog: merged_blktrace(r)?,
            write_iolog: r.text(&WRITE_IOLOG),
            no_stall: r.bool(&REPLAY_NO_STALL)?,
            time_scale: r.num(&REPLAY_TIME_SCALE)?.max(1) as u64,
            redirect: r.text(&REPLAY_REDIRECT),
            align: r.bytes(&REPLAY_ALIGN)?,
            scale: r.num(&REPLAY_SCALE)?.max(0) as u64,
            chunked: r.bool(&READ_IOLOG_CHUNKED)?,
            skip: match r.raw.value(&REPLAY_SKIP) {
                Some(v) => parse_replay_skip(v).map_err(|m| r.invalid(&REPLAY_SKIP, m))?,
                None => 0,
            },
        };
        if replay.align != 0 && !replay.align.is_power_of_two() {
            return Err(r.invalid(&REPLAY_ALIGN, "must be a power of two"));
        }
        let mut norandommap = r.bool(&NORANDOMMAP)?;
        let mut notes = Vec::new();
        let sprandom = if r.bool(&SPRANDOM)? {
            // fio's fix-ups: sprandom needs random writes from the LFSR without a map, and
            // sets the two itself when they are not given.
            if !(pattern.writes() && pattern.is_random()) {
                return Err(r.invalid(
                    &SPRANDOM,
                    "sprandom requires random write, random_generator=lfsr, norandommap=1 \
                     (rw=randwrite, randrw or randtrimwrite)",
                ));
            }
            if !r.is_set(&RANDOM_GENERATOR) {
                notes.push("fio: sprandom sets random_generator=lfsr\n");
                random_generator = RandomGenerator::Lfsr;
            } else if random_generator != RandomGenerator::Lfsr {
                return Err(r.invalid(&RANDOM_GENERATOR, "sprandom requires random_generator=lfsr"));
            }
            if !r.is_set(&NORANDOMMAP) {
                notes.push("fio: sprandom sets norandommap=1\n");
                norandommap = true;
            } else if !norandommap {
                return Err(r.invalid(&NORANDOMMAP, "sprandom requires norandommap=1"));
            }
            let op_text = r.string(&SPR_OP);
            let op =
                crate::defs::value::number::parse_float(op_text.split(':').next().unwrap_or(""))
                    .map_err(|e| r.invalid(&SPR_OP, e))?;
            if !(op > 0.0 && op < 1.0) {
                return Err(r.invalid(
                    &SPR_OP,
                    format!("'{op_text}' is not an over-provisioning ratio: expected a number between 0 and 1, such as 0.15"),
                ));
            }
            let num_regions = r.num(&SPR_NUM_REGIONS)?;
            if num_regions < 1 {
                return Err(r.invalid(&SPR_NUM_REGIONS, "sprandom needs at least one region"));
            }
            Some(SpRandomOpts {
                over_provisioning: op,
                num_regions: num_regions as u32,
                cache_size: r.bytes(&SPR_CS)?,
            })
        } else {
            None
        };
        Ok(Workload {
            pattern,
            seq_add,
            seq_nr,
            rw_sequencer,
            rwmix_read: rwmix_read as u32,
            perc_rand,
            bs,
            bssplit,
            bs_unaligned: r.bool(&BS_UNALIGNED)?,
            bs_is_seq_rand: r.bool(&BS_IS_SEQ_RAND)?,
            blockalign,
            size: r.size_spec(&SIZE)?,
            io_size: r.size_spec(&IO_SIZE)?,
            offset: r.size_spec(&OFFSET)?.unwrap_or(SizeSpec::Bytes(0)),
            offset_align: r.size(&OFFSET_ALIGN)?.filter(|&v| v != 0),
            offset_increment: r.size_spec(&OFFSET_INCREMENT)?,
            number_ios: r.num(&NUMBER_IOS)?.max(0) as u64,
            loops: r.num(&LOOPS)?.max(1) as u32,
            fill_device: r.bool(&FILL_DEVICE)?,
            zone_size: zs,
            zone_range: zr,
            zone_skip: zk,
            zbd,
            file_service,
            randrepeat,
            randseed,
            allrandrepeat,
            release: r.raw.release,
            norandommap,
            softrandommap: r.bool(&SOFTRANDOMMAP)?,
            random_generator,
            random_generator_set: r.is_set(&RANDOM_GENERATOR),
            distribution,
            replay,
            sprandom,
            notes,
        })
    }
}

/// `bssplit` for one direction: `4k/10:64k/50:32k` (a missing share splits the rest).
fn parse_bssplit(r: &Reader, text: &str) -> Result<Vec<(u64, u32)>, JobError> {
    let mut out: Vec<(u64, Option<u32>)> = Vec::new();
    for item in text.split(':') {
        if item.is_empty() {
            break;
        }
        let (size, perc) = match item.split_once('/') {
            // A blank percentage (`1k/`) is a missing one, as fio reads it.
            Some((s, p)) if p.trim().is_empty() => (s, None),
            Some((s, p)) => {
                let p: u32 = p
                    .trim()
                    .parse()
                    .map_err(|_| r.invalid(&BSSPLIT, format!("'{p}' is not a percentage")))?;
                (s, (p != 0).then_some(p.min(100)))
            }
            None => (item, None),
        };
        out.push((r.size_of(size, &BSSPLIT)?, perc));
    }
    let given: u32 = out.iter().filter_map(|e| e.1).sum();
    let missing = out.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 && missing > 1 {
        return Err(r.invalid(&BSSPLIT, "the percentages add up to more than 100"));
    }
    let rest = if missing == 1 && out.len() == 1 {
        0
    } else {
        100u32.saturating_sub(given) / missing.max(1)
    };
    let mut v: Vec<(u64, u32)> = out
        .into_iter()
        .map(|(s, p)| {
            (
                s,
                p.unwrap_or(if missing == 1 && given == 0 {
                    100
                } else {
                    rest
                }),
            )
        })
        .collect();
    v.sort_by_key(|e| e.1);
    Ok(v)
}

fn parse_file_service(r: &Reader) -> Result<FileService, JobError> {
    let name = &FILE_SERVICE_TYPE;
    let text = r.text(name).unwrap_or_default();
    let (word, post) = split_word(&text);
    let count = |post: Option<&str>| -> Result<u32, JobError> {
        match post {
            None => Ok(1),
            Some(p) => p
                .parse::<u32>()
                .map(|n| n.max(1))
                .map_err(|_| r.invalid(name, format!("'{p}' is not a count"))),
        }
    };
    Ok(match word {
        "roundrobin" => FileService::RoundRobin(count(post)?),
        "sequential" => FileService::Sequential(count(post)?),
        "random" => FileService::Random(count(post)?),
        "zipf" => {
            let (theta, center) = value_center(r, name, post, 1.1)?;
            FileService::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = value_center(r, name, post, 0.2)?;
            FileService::Pareto { h, center }
        }
        "normal" | "gauss" => {
            let (dev, center) = value_center(r, name, post, 0.0)?;
            FileService::Normal { dev, center }
        }
        o => return Err(r.invalid(name, format!("unknown type '{o}'"))),
    })
}

/// `random_distribution=`, read by the option checker's own parser (one form, one set
/// of rules for `--parse-only` and the run).
fn parse_distribution(r: &Reader) -> Result<Distribution, JobError> {
    let name = &RANDOM_DISTRIBUTION;
    match r.text(name) {
        None => Ok(Distribution::Random),
        Some(text) => crate::defs::value::parse_distribution(&text, r.kb_base())
            .map_err(|e| r.invalid(name, e)),
    }
}

/// `zonemode=zbd`: fio's zoned block device mode, here always emulated on a regular file
/// (or a block device without zones), whose zones start empty (see `gen::zbd`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZbdOptions {
    /// `zonesize`: every zone's size in bytes.
    pub zone_size: u64,
    /// `zonecapacity`: the bytes of each zone that may be written (the zone size when 0).
    pub zone_capacity: u64,
    /// `zoneskip`: bytes a sequential job skips after each zone (a multiple of the zone size).
    pub zone_skip: u64,
    /// `max_open_zones`: zones of a file written at once, over all jobs (0: no limit).
    pub max_open_zones: u32,
    /// `job_max_open_zones`: zones written at once by one job clone (0: no limit).
    pub job_max_open_zones: u32,
    /// `zone_reset_threshold`: the written share of the region above which zones are reset.
    pub reset_threshold: f64,
    /// `zone_reset_frequency`: over the threshold, one write in 1/this resets its zone.
    pub reset_frequency: f64,
    /// `read_beyond_wp`: reads may go past a zone's write pointer.
    pub read_beyond_wp: bool,
    /// `ignore_zone_limits`: only changes what a host-managed device reports, so nothing
    /// on an emulated zone; kept for the record.
    pub ignore_zone_limits: bool,
}

impl ZbdOptions {
    /// The zone options of a `zonemode=zbd` job, refused where fio refuses them (most of
    /// these fio checks only when it sets the file up; the size checks need the file and
    /// stay there, see `gen::zbd::attach`).
    fn resolve(
        r: &Reader,
        zone_size: u64,
        pattern: Pattern,
        bs: &[(u64, u64); 3],
    ) -> Result<Self, JobError> {
        // On a device fio takes the zones from the device itself; iobench's zones are
        // emulated, so it can use only those a zonesize lays out.
        let on_device = r
            .text(&crate::defs::rows::FILENAME)
            .is_some_and(|f| f.split(':').any(|n| n.starts_with("/dev/")));
        if zone_size == 0 && on_device {
            return Err(JobError::Parse(
                crate::error::ParseError::NotSupportedBecause {
                    name: "zonemode".into(),
                    why: "the zones of a zoned device are not read yet (iobench's zonemode=zbd \
                      lays zones out itself: give zonesize=)",
                    origin: r.raw.origin.clone(),
                },
            ));
        }
        if zone_size == 0 {
            return Err(r.invalid(
                &ZONESIZE,
                "zonemode=zbd needs a zonesize on a regular file or a device without zones \
                 (as fio: specifying the zone size is mandatory)",
            ));
        }
        if zone_size < 512 {
            return Err(r.invalid(
                &ZONESIZE,
                format!("{zone_size}: zonemode=zbd needs zones of at least 512 bytes"),
            ));
        }
        let zone_capacity = r.bytes(&ZONECAPACITY)?;
        if zone_capacity > zone_size {
            return Err(r.invalid(
                &ZONECAPACITY,
                format!("{zone_capacity} is larger than zonesize {zone_size}"),
            ));
        }
        if r.is_set(&CREATE_SERIALIZE) && !r.bool(&CREATE_SERIALIZE)? {
            return Err(r.invalid(
                &CREATE_SERIALIZE,
                "0 cannot be used with zonemode=zbd (as in fio: the zones are set up before \
                 the jobs start)",
            ));
        }
        let zone_skip = r.size_or_zones(&ZONESKIP)?.unwrap_or(0);
        if zone_skip % zone_size != 0 {
            return Err(r.invalid(
                &ZONESKIP,
                format!("{zone_skip} is not a multiple of zonesize {zone_size}"),
            ));
        }
        if matches!(
            pattern,
            Pattern::Trim | Pattern::RandTrim | Pattern::TrimWrite | Pattern::RandTrimWrite
        ) {
            return Err(r.invalid(
                &RW,
                "trims with zonemode=zbd (fio resets the zone instead) are not supported yet",
            ));
        }
        if pattern.writes() {
            let max_bs = bs[Ddir::Write as usize].0.max(bs[Ddir::Write as usize].1);
            if max_bs > zone_size {
                return Err(r.invalid(
                    &BS,
                    format!(
                        "a write block of {max_bs} bytes exceeds zonesize {zone_size} (fio \
                         fails the job with EINVAL at its first write)"
                    ),
                ));
            }
        }
        let fraction = |def: &OptDef| -> Result<f64, JobError> {
            let Some(v) = r.text(def) else {
                return Ok(0.0);
            };
            let vals = crate::defs::value::parse_float_list(&v).map_err(|e| r.invalid(def, e))?;
            let f = vals.first().copied().unwrap_or(0.0);
            if !(0.0..=1.0).contains(&f) {
                return Err(r.invalid(def, format!("{f} is not between 0 and 1")));
            }
            Ok(f)
        };
        let open_limit = |def: &OptDef| -> Result<u32, JobError> {
            Ok(r.int(def)?.unwrap_or(0).clamp(0, 4096) as u32)
        };
        Ok(ZbdOptions {
            zone_size,
            zone_capacity: if zone_capacity == 0 {
                zone_size
            } else {
                zone_capacity
            },
            zone_skip,
            max_open_zones: open_limit(&MAX_OPEN_ZONES)?,
            job_max_open_zones: open_limit(&JOB_MAX_OPEN_ZONES)?,
            reset_threshold: fraction(&ZONE_RESET_THRESHOLD)?,
            reset_frequency: fraction(&ZONE_RESET_FREQUENCY)?,
            read_beyond_wp: r.bool(&READ_BEYOND_WP)?,
            ignore_zone_limits: r.bool(&IGNORE_ZONE_LIMITS)?,
        })
    }
}
