//! Resolving a job's options into the generator's `Config`: directions, block sizes and
//! alignment, the region totals, seeds and the other settings the hot path reads, as
//! fio's option fix-ups leave them.

use super::{plan, rand, Config, FileExtent};
use crate::defs::Pattern;
use crate::error::JobError;
use crate::job::workload::{Distribution, FileService, RandomGenerator};
use crate::job::Job;

impl Config {
    pub(super) fn resolve(
        job: &Job,
        clone_index: u32,
        thread_number: u64,
        files: &[FileExtent],
    ) -> Result<Self, JobError> {
        let w = &job.workload;
        let p = w.pattern;
        let random = p.is_random();
        let (read, write, _trim) = match p {
            Pattern::Read | Pattern::RandRead => (true, false, false),
            Pattern::Write | Pattern::RandWrite => (false, true, false),
            Pattern::Trim | Pattern::RandTrim => (false, false, true),
            Pattern::ReadWrite | Pattern::RandRw => (true, true, false),
            Pattern::TrimWrite | Pattern::RandTrimWrite => (false, true, true),
        };
        let mut min_bs = [0u64; 3];
        let mut max_bs = [0u64; 3];
        let mut ba = [0u64; 3];
        for d in 0..3 {
            min_bs[d] = w.bs[d].0;
            max_bs[d] = w.bs[d].1.max(w.bs[d].0);
            ba[d] = if w.blockalign[d] == 0 || !random {
                min_bs[d]
            } else {
                w.blockalign[d]
            };
        }
        let regions = plan::file_regions(job, clone_index, files);
        let total: u64 = regions.iter().map(|r| r.io_size_scaled).sum();
        let size = match w.size {
            Some(crate::defs::value::SizeSpec::Bytes(b)) if b != 0 && b <= total => b,
            _ => total,
        };
        // fio refuses a job whose data set is smaller than its smallest block.
        let td_min_bs = min_bs[..2].iter().copied().min().unwrap_or(0);
        if size < td_min_bs && !job.exec.time_based && w.replay.read_iolog.is_none() {
            return Err(JobError::Invalid {
                job: job.name.clone(),
                message: "blocksize is larger than data set range".into(),
            });
        }
        let io_size_bytes = match w.io_size {
            Some(crate::defs::value::SizeSpec::Bytes(b)) if b != 0 => Some(b),
            _ => None,
        };
        let limit = io_size_bytes.unwrap_or(size);
        let mut pass_total = size;
        if write && random && w.norandommap {
            pass_total = pass_total.max(io_size_bytes.unwrap_or(0));
        }
        if p == Pattern::TrimWrite || p == Pattern::RandTrimWrite {
            pass_total += limit.saturating_mul(w.loops as u64);
        }
        let verify_on = job.verify.method != crate::defs::verify_method::Method::None;
        // fio's do_io reads the verify backlog among the writes: a loop may issue up to
        // `size` bytes more.
        if verify_on && write && job.verify.backlog > 0 {
            pass_total += size;
        }
        let rw_min_bs = min_bs.iter().copied().min().unwrap_or(1);
        let max_region = regions.iter().map(|r| r.io_size).max().unwrap_or(0);
        let use64 = w.random_generator == RandomGenerator::Tausworthe64
            || (!w.random_generator_set && max_region / rw_min_bs > u32::MAX as u64);
        let seeds = rand::clone_seeds(w, thread_number);
        rand::debug_seeds(w.release, &seeds);
        let service_nr = match w.file_service {
            FileService::RoundRobin(n) | FileService::Sequential(n) | FileService::Random(n) => n,
            _ => 1,
        };
        // fio seeds the write sizes like the read ones whenever verify is not `none`
        // (`null`, and `verify_pattern` alone, count too), so a read pass sees the writes.
        let verify = job.verify.method != crate::defs::verify_method::Method::None;
        Ok(Config {
            read,
            write,

            random,
            trimwrite: p == Pattern::TrimWrite || p == Pattern::RandTrimWrite,
            randtrimwrite: p == Pattern::RandTrimWrite,
            seq_add: w.seq_add,
            seq_nr: w.seq_nr,
            rw_seq: w.rw_sequencer,
            rwmix: [w.rwmix_read, 100 - w.rwmix_read],
            perc_rand: w.perc_rand,
            min_bs,
            max_bs,
            ba,
            bssplit: w.bssplit.clone(),
            bs_unaligned: w.bs_unaligned,
            bs_is_seq_rand: w.bs_is_seq_rand,
            td_max_bs: max_bs.iter().copied().max().unwrap_or(0),
            lfsr: w.random_generator == RandomGenerator::Lfsr,
            use64,
            repeatable: w.randrepeat && w.randseed.is_none(),
            seeds,
            verify,
            distribution: w.distribution.clone(),
            zone_size: w.zone_size,
            zone_range: w.zone_range,
            zone_skip: w.zone_skip,
            time_based: job.exec.time_based,
            loops: w.loops,
            number_ios: w.number_ios,

            limit,
            io_size_set: io_size_bytes.is_some(),
            pass_total,
            pass_limited: job.exec.offload || !job.exec.engine.completes_in_queue(job.exec.iodepth),
            // fio ends a timed job's loop at the byte check too when it verifies (its
            // verify phase follows, then the next loop).
            timed_verify: job.exec.time_based && verify_on && w.replay.read_iolog.is_none(),
            service: w.file_service,
            service_nr,
            max_open: match job.files.openfiles as usize {
                0 => files.len(),
                n => n.min(files.len()),
            }
            .max(1),
            thread_number,
            sprandom: w.sprandom,
        })
    }

    /// A random map is kept for uniform random offsets only (fio turns it off for every
    /// other distribution, zoned included, and when blockalign differs from the block
    /// size).
    pub(super) fn uses_map(&self) -> bool {
        matches!(self.distribution, Distribution::Random) && self.ba == self.min_bs
    }
}
