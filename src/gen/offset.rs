//! The direction, offset and length of one I/O in one file, step by step as fio's
//! `fill_io_u` makes them: rwmix choice, trimwrite pairing, strided zones, sequential
//! positions with `:N` holes (forward or backward), random blocks through the random map,
//! LFSR or a distribution, and block sizes from ranges or bssplit.

use super::{Generator, NextIo, NONE};
use crate::defs::Ddir;
use crate::job::workload::{Distribution, RwSequencer};

impl Generator {
    /// fio's `fill_io_u` for file `fi`: `None` when the file has nothing more to give.
    pub(super) fn fill_io(&mut self, fi: usize) -> Option<NextIo> {
        // zonemode=zbd has its own version of this (gen::zbd): one test per I/O here.
        if self.zbd.is_some() {
            return self.zbd_fill_io(fi);
        }
        let ddir = self.set_rw_ddir(fi);
        if self.cfg.zone_size != 0 {
            self.strided_zone(fi, ddir);
        }
        let (offset, is_random, busy_ok) = self.next_offset(fi, ddir)?;
        self.last_tried_offset = offset;
        let mut len = self.next_buflen(fi, ddir, offset, is_random);
        if len == 0 {
            return None;
        }
        let mark_map = self.cfg.random && !busy_ok;
        if offset + len > self.files[fi].real_size {
            return None;
        }
        if mark_map {
            len = self.mark_random_map(fi, ddir, offset, len);
        }
        Some(self.counted_io(fi, ddir, offset, len))
    }

    /// The I/O made, its length counted towards the strided zone.
    #[inline(always)]
    pub(super) fn counted_io(&mut self, fi: usize, ddir: Ddir, offset: u64, len: u64) -> NextIo {
        self.zone_bytes += len;
        NextIo {
            ddir,
            file: fi,
            offset,
            len,
        }
    }

    /// fio's `mark_random_map`: marks the blocks from `offset` as done; the length is
    /// cut to the blocks that were still free when some were not.
    #[inline(always)]
    pub(super) fn mark_random_map(&mut self, fi: usize, ddir: Ddir, offset: u64, len: u64) -> u64 {
        let f = &mut self.files[fi];
        let Some(map) = &mut f.map else {
            return len;
        };
        let min_bs = self.cfg.min_bs[ddir as usize];
        let block = (offset - f.file_offset) / min_bs;
        let nr = len.div_ceil(min_bs);
        let set = map.set_nr(block, nr);
        if set != 0 && set * min_bs < len {
            set * min_bs
        } else {
            len
        }
    }

    /// fio's `set_rw_ddir`: the direction of the next I/O.
    #[inline(always)]
    pub(super) fn set_rw_ddir(&mut self, fi: usize) -> Ddir {
        let c = &self.cfg;
        let ddir = if c.read && c.write {
            if self.io_issues[self.rwmix_ddir as usize] >= self.rwmix_issues {
                let v = self.rng.rwmix.between(1, 100);
                let d = if v <= c.rwmix[0] as u64 {
                    Ddir::Read
                } else {
                    Ddir::Write
                };
                if d != self.rwmix_ddir {
                    // fio sizes the run of the new direction from the old one's count.
                    let old = self.rwmix_ddir as usize;
                    let diff = c.rwmix[old ^ 1] as u64;
                    self.rwmix_issues = self.io_issues[old] * diff / 100;
                }
                self.rwmix_ddir = d;
            }
            self.rwmix_ddir
        } else if c.read {
            Ddir::Read
        } else if c.write {
            Ddir::Write
        } else {
            Ddir::Trim
        };
        self.rwmix_ddir = ddir;
        if c.trimwrite {
            let f = &self.files[fi];
            if f.last_start[Ddir::Write as usize] == f.last_start[Ddir::Trim as usize] {
                return Ddir::Trim;
            }
            return Ddir::Write;
        }
        ddir
    }

    /// fio's strided zone bookkeeping before each I/O.
    fn strided_zone(&mut self, fi: usize, ddir: Ddir) {
        let (size, range, skip) = (self.cfg.zone_size, self.cfg.zone_range, self.cfg.zone_skip);
        let d = ddir as usize;
        {
            let f = &mut self.files[fi];
            if self.zone_bytes >= size {
                self.zone_bytes = 0;
                f.file_offset += range + skip;
                if f.file_offset >= f.real_size {
                    f.file_offset = f.loop_start;
                }
                f.last_pos[d] = f.file_offset;
            }
            if f.last_pos[d] >= f.file_offset + range {
                f.last_pos[d] = f.file_offset;
            }
        }
        if range != 0 && self.zone_bytes % range == 0 {
            self.reset_file(fi);
        }
    }

    /// fio's `get_next_offset`: the absolute offset, whether it was random, and whether
    /// the random map is to be left alone for it.
    #[inline(always)]
    pub(super) fn next_offset(&mut self, fi: usize, ddir: Ddir) -> Option<(u64, bool, bool)> {
        let mut hit = false;
        if self.cfg.seq_nr != 0 {
            self.seq_nr_left = self.seq_nr_left.wrapping_sub(1);
            if self.seq_nr_left == 0 {
                hit = true;
                self.seq_nr_left = self.cfg.seq_nr;
            }
        }
        let d = ddir as usize;
        let (rel, is_random, busy_ok) = if self.cfg.randtrimwrite && ddir == Ddir::Write {
            (self.files[fi].last_start[Ddir::Trim as usize], true, true)
        } else if hit {
            if self.cfg.random {
                if self.should_do_random(ddir) {
                    (self.rand_block(fi, ddir)? * self.cfg.ba[d], true, false)
                } else {
                    match self.seq_offset(fi, ddir) {
                        Some(o) => (o, false, true),
                        None => (self.rand_block(fi, ddir)? * self.cfg.ba[d], false, true),
                    }
                }
            } else {
                (self.seq_offset(fi, ddir)?, false, false)
            }
        } else {
            match self.cfg.rw_seq {
                RwSequencer::Sequential => match self.seq_offset(fi, ddir) {
                    Some(o) => (o, false, true),
                    None => (self.rand_block(fi, ddir)? * self.cfg.ba[d], false, true),
                },
                RwSequencer::Identical => {
                    let f = &self.files[fi];
                    let o = if f.last_start[d] != NONE {
                        f.last_start[d].wrapping_sub(f.file_offset)
                    } else {
                        0
                    };
                    (o, false, true)
                }
            }
        };
        let offset = self.region_offset(fi, rel)?;
        let f = &mut self.files[fi];
        if self.cfg.randtrimwrite
            && ddir == Ddir::Trim
            && f.last_start[Ddir::Trim as usize] == offset
        {
            let w = &mut f.last_start[Ddir::Write as usize];
            *w = w.wrapping_sub(1);
        }
        Some((offset, is_random, busy_ok))
    }

    /// `rel`, an offset into the file's region, as an absolute offset; `None` when it
    /// lies past the region or the file.
    #[inline(always)]
    pub(super) fn region_offset(&self, fi: usize, rel: u64) -> Option<u64> {
        let f = &self.files[fi];
        if rel >= f.io_size {
            return None;
        }
        let offset = rel + f.file_offset;
        (offset < f.real_size).then_some(offset)
    }

    fn should_do_random(&mut self, ddir: Ddir) -> bool {
        let p = self.cfg.perc_rand[ddir as usize];
        if p == 100 {
            return true;
        }
        self.rng.seq_rand[ddir as usize].between(1, 100) <= p as u64
    }

    /// fio's `get_next_seq_offset`: the next sequential position relative to the region.
    fn seq_offset(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let d = ddir as usize;
        let add = self.cfg.seq_add;
        let single = self.files.len() == 1;
        let time_based = self.cfg.time_based;
        let f = &mut self.files[fi];
        if f.last_pos[d] >= f.io_size + f.loop_start && time_based && single {
            f.last_pos[d] = f.file_offset;
        }
        if f.last_pos[d] >= f.real_size {
            return None;
        }
        let end = f.real_size.min(f.io_size);
        if f.last_pos[d] == f.file_offset && f.file_offset != 0 && add < 0 {
            f.last_pos[d] = end;
        }
        let mut pos = f.last_pos[d].wrapping_sub(f.file_offset);
        if pos != 0 && add != 0 {
            pos = pos.wrapping_add(add as u64);
            if pos >= f.real_size {
                pos = if add > 0 {
                    f.file_offset
                } else {
                    end.wrapping_add(add as u64)
                };
            }
        }
        Some(pos)
    }

    /// fio's `get_next_rand_block`: a block number; a time_based job (or a non-uniform
    /// file service) starts the file over once when its blocks run out.
    fn rand_block(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        self.block_or_restart(fi, |g| g.rand_offset(fi, ddir))
    }

    /// `pick`'s block; when the blocks ran out, a time_based job (or a non-uniform file
    /// service) starts the file over and picks once more.
    #[inline(always)]
    pub(super) fn block_or_restart(
        &mut self,
        fi: usize,
        mut pick: impl FnMut(&mut Self) -> Option<u64>,
    ) -> Option<u64> {
        if let Some(b) = pick(self) {
            return Some(b);
        }
        if self.cfg.time_based || self.cfg.service.nonuniform() {
            self.reset_file(fi);
            return pick(self);
        }
        None
    }

    /// The number of `blockalign` blocks a random offset may start at.
    #[inline(always)]
    fn last_block(&self, fi: usize, ddir: Ddir) -> u64 {
        let d = ddir as usize;
        let f = &self.files[fi];
        let mut max_size = f.io_size.min(f.real_size);
        if self.cfg.zone_size != 0 && self.cfg.zone_range != 0 {
            max_size = self.cfg.zone_range;
        }
        let (min_bs, ba) = (self.cfg.min_bs[d], self.cfg.ba[d]);
        if min_bs > ba {
            max_size = max_size.saturating_sub(min_bs - ba);
        }
        max_size / ba
    }

    /// fio's `get_next_rand_offset`, per distribution.
    fn rand_offset(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let d = ddir as usize;
        if ddir == Ddir::Write && self.cfg.sprandom.is_some() {
            return self.sprandom_block(fi);
        }
        match &self.cfg.distribution {
            Distribution::Random => self.uniform_in_region(fi, ddir),
            Distribution::Zipf { .. } => self.files[fi].zipf.as_mut().map(|z| z.next_zipf()),
            Distribution::Pareto { .. } => self.files[fi].zipf.as_mut().map(|z| z.next_pareto()),
            Distribution::Normal { .. } => self.files[fi].gauss.as_mut().map(|g| g.next()),
            Distribution::Zoned(zones) | Distribution::ZonedAbs(zones) => {
                let abs = matches!(self.cfg.distribution, Distribution::ZonedAbs(_));
                let lastb = self.last_block(fi, ddir);
                if lastb == 0 {
                    return None;
                }
                if zones[d].is_empty() {
                    return self.uniform_block(fi, lastb);
                }
                let v = self.rng.zone.between(1, 100);
                // Find the zone the draw falls in, and the zones' cumulative start.
                let mut acc = 0u64;
                let (mut prev, mut cur) = (0u64, 0u64);
                for z in &zones[d] {
                    prev = cur;
                    cur += z.size;
                    acc += z.access_perc as u64;
                    if v <= acc {
                        break;
                    }
                }
                if abs {
                    let ba = self.cfg.ba[d];
                    let (stotal, send) = (prev / ba, cur / ba);
                    if send > lastb {
                        return None;
                    }
                    Some(self.uniform_block(fi, send - stotal)? + stotal)
                } else {
                    let offset = if prev != 0 { prev * lastb / 100 } else { 0 };
                    let span = lastb * (cur - prev) / 100;
                    Some(self.uniform_block(fi, span)? + offset)
                }
            }
        }
    }

    /// A uniform random block of the file's region (`None` when the region holds none).
    #[inline(always)]
    pub(super) fn uniform_in_region(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let lastb = self.last_block(fi, ddir);
        if lastb == 0 {
            return None;
        }
        self.uniform_block(fi, lastb)
    }

    /// `sprandom`'s next block to write; when it has none the job is done (fio sets
    /// `td->done`), loops and time_based alike.
    fn sprandom_block(&mut self, fi: usize) -> Option<u64> {
        let f = &mut self.files[fi];
        let b = match (&mut f.spr, &mut f.lfsr) {
            (Some(s), Some(l)) => s.next(l),
            _ => None,
        };
        if b.is_none() {
            self.spr_done = true;
        }
        b
    }

    /// fio's `__get_next_rand_offset`: a uniform block below `lastb` (or the LFSR's next),
    /// moved to the next free block when the random map says it was done this pass.
    fn uniform_block(&mut self, fi: usize, lastb: u64) -> Option<u64> {
        let b = if self.cfg.lfsr {
            self.files[fi].lfsr.as_mut()?.next()?
        } else {
            let r = self.rng.random.next_raw();
            crate::dprint!(crate::debug::Cat::Random, "off rand {r}");
            let max = self.rng.random.max() as f64 + 1.0;
            (lastb as f64 * (r as f64 / max)) as u64
        };
        match &self.files[fi].map {
            None => Some(b),
            Some(m) if !m.is_set(b) => Some(b),
            Some(m) => {
                crate::dprint!(
                    crate::debug::Cat::Random,
                    "get_next_rand_offset: offset {b} busy"
                );
                m.next_free(b)
            }
        }
    }

    /// fio's `get_next_buflen`.
    #[inline(always)]
    pub(super) fn next_buflen(
        &mut self,
        fi: usize,
        ddir: Ddir,
        offset: u64,
        is_random: bool,
    ) -> u64 {
        let c = &self.cfg;
        let f = &self.files[fi];
        if c.randtrimwrite && ddir == Ddir::Write {
            let t = Ddir::Trim as usize;
            return f.last_pos[t].wrapping_sub(f.last_start[t]);
        }
        let d = if c.bs_is_seq_rand {
            if is_random {
                1
            } else {
                0
            }
        } else {
            ddir as usize
        };
        let (minbs, maxbs) = (c.min_bs[d], c.max_bs[d]);
        if minbs == maxbs {
            return minbs;
        }
        let end = f.io_size + f.loop_start;
        let fits = |len: u64| offset + len <= end;
        if !fits(minbs) {
            return 0;
        }
        let rng = &mut self.rng.bsrange[d];
        let frand_max = rng.max();
        loop {
            let r = rng.next_raw();
            let mut buflen = 0;
            if c.bssplit[d].is_empty() {
                buflen = minbs + (maxbs as f64 * (r as f64 / (frand_max as f64 + 1.0))) as u64;
            } else {
                let mut perc = 0u64;
                for &(bs, p) in &c.bssplit[d] {
                    if p == 0 {
                        continue;
                    }
                    buflen = bs;
                    perc += p as u64;
                    if r / perc <= frand_max / 100 && fits(buflen) {
                        break;
                    }
                }
            }
            if !c.bs_unaligned {
                if minbs.is_power_of_two() {
                    buflen &= !(minbs - 1);
                } else {
                    buflen -= buflen % minbs;
                }
            }
            buflen = buflen.min(maxbs);
            if fits(buflen) {
                return buflen;
            }
        }
    }
}
