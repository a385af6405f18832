//! The usual random job's next I/O, made without the general path's option tests: one
//! direction, every I/O random (`percentage_random` 100, no `rw=randread:N`), offsets
//! uniform over the region, one block size, no zones. `fill_io` tests a dozen settings
//! per I/O to find that this is the case; `fill_plain` knows it, and makes the same I/O
//! (same offset, length, random map and counters: the tests below run both side by side).

use super::{Config, Generator, NextIo};
use crate::defs::Ddir;
use crate::job::workload::Distribution;

impl Config {
    /// The direction of every I/O when `fill_plain` may stand in for `fill_io`, decided
    /// once per job; `None` for any other job.
    pub(super) fn plain_ddir(&self, zoned: bool) -> Option<Ddir> {
        let ddir = match (self.read, self.write) {
            (true, false) => Ddir::Read,
            (false, true) => Ddir::Write,
            _ => return None,
        };
        let d = ddir as usize;
        let plain = !zoned
            && self.random
            && !self.trimwrite
            && !self.randtrimwrite
            && self.zone_size == 0
            && self.seq_nr == 1
            && self.perc_rand[d] == 100
            && matches!(self.distribution, Distribution::Random)
            && !self.lfsr
            && !self.bs_is_seq_rand
            && self.min_bs[d] == self.max_bs[d]
            && self.min_bs[d] != 0;
        plain.then_some(ddir)
    }
}

impl Generator {
    /// `fill_io` for a job `Config::plain_ddir` accepted: the same steps with the tests
    /// for unused settings left out. `seq_nr_left` stays 1 (with `seq_nr` 1 every I/O
    /// is a random one), so it is not touched.
    #[inline(always)]
    pub(super) fn fill_plain(&mut self, fi: usize, ddir: Ddir) -> Option<NextIo> {
        let d = ddir as usize;
        self.rwmix_ddir = ddir;
        let block = self.block_or_restart(fi, |g| g.uniform_in_region(fi, ddir))?;
        let offset = self.region_offset(fi, block * self.cfg.ba[d])?;
        self.last_tried_offset = offset;
        let len = self.cfg.min_bs[d];
        if offset + len > self.files[fi].real_size {
            return None;
        }
        let len = self.mark_random_map(fi, ddir, offset, len);
        Some(self.counted_io(fi, ddir, offset, len))
    }
}

#[cfg(test)]
mod tests {
    use crate::gen::tests::gen_for;

    /// Runs the job's generator with `fill_plain` and again with `fill_io`, side by side,
    /// and compares every I/O, the passes and the file events (at most `cap` I/Os).
    fn same_as_general(args: &[&str], cap: usize) {
        let mut plain = gen_for(args, 0);
        let mut general = gen_for(args, 0);
        assert!(plain.plain.is_some(), "{args:?} should take the plain path");
        general.plain = None;
        let mut n = 0;
        loop {
            let (a, b) = (plain.next_io(), general.next_io());
            assert_eq!(a, b, "{args:?}: I/O {n}");
            assert_eq!(plain.pass(), general.pass(), "{args:?}: I/O {n}");
            while let Some(e) = general.take_file_event() {
                assert_eq!(plain.take_file_event(), Some(e), "{args:?}: I/O {n}");
            }
            assert_eq!(plain.take_file_event(), None, "{args:?}: I/O {n}");
            if a.is_none() || n == cap {
                break;
            }
            n += 1;
        }
        assert!(n > 0, "{args:?}: no I/O");
    }

    #[test]
    fn plain_jobs_make_the_same_ios_as_the_general_path() {
        let jobs: &[&[&str]] = &[
            &["--rw=randread", "--size=1m"],
            &["--rw=randwrite", "--size=1m", "--offset=64k", "--bs=8k"],
            &["--rw=randread", "--size=1m", "--norandommap"],
            &["--rw=randread", "--size=1m", "--bs=8k", "--blockalign=4k"],
            &[
                "--rw=randread",
                "--size=768k",
                "--nrfiles=3",
                "--file_service_type=random",
            ],
            &["--rw=randread", "--size=64k", "--time_based", "--runtime=1"],
            &["--rw=randwrite", "--size=256k", "--loops=3"],
            &["--rw=randwrite", "--size=1m", "--io_size=3m"],
            &[
                "--rw=randread",
                "--size=1m",
                "--random_generator=tausworthe64",
            ],
            &[
                "--rw=randread",
                "--nrfiles=2",
                "--size=96k",
                "--file_service_type=roundrobin:3",
            ],
            &[
                "--rw=randread",
                "--size=1m",
                "--nrfiles=4",
                "--file_service_type=zipf:1.2",
                "--number_ios=3000",
            ],
            &["--rw=randread", "--size=1m", "--bs=3k"],
        ];
        for args in jobs {
            same_as_general(args, 5000);
        }
    }

    #[test]
    fn other_jobs_take_the_general_path() {
        let jobs: &[&[&str]] = &[
            &["--rw=read"],
            &["--rw=randrw"],
            &["--rw=randread:4"],
            &["--rw=randread", "--percentage_random=50"],
            &["--rw=randread", "--bsrange=4k-16k"],
            &["--rw=randread", "--bssplit=4k/50:8k/50"],
            &[
                "--rw=randread",
                "--zonemode=strided",
                "--zonesize=64k",
                "--zonerange=128k",
            ],
            &["--rw=randread", "--random_distribution=zipf:1.1"],
            &["--rw=randread", "--random_generator=lfsr"],
            &["--rw=randtrim"],
            &["--rw=randtrimwrite"],
        ];
        for args in jobs {
            let mut all = vec!["--size=1m"];
            all.extend_from_slice(args);
            assert_eq!(gen_for(&all, 0).plain, None, "{args:?}");
        }
    }
}
