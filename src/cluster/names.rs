//! Each rank's own file names. Ranks on one shared file system (NFS, Lustre, CephFS) that
//! used the job's names as they are would lay out, write and delete the same files at
//! once. As fio does for its clients (`unique_filename`, on by default), every rank's file
//! names get the rank in them: `.rN` after each name of a `filename` list (block devices
//! under /dev excepted) and after generated names, or the rank in place of
//! `$clientuid` when `filename_format` has it. `unique_filename=0` keeps the names shared.
//!
//! With `--rotate-ranks` (IOR's -C), a job that only reads uses another rank's suffix, so
//! it reads the data that rank wrote and not what this host has in its page cache.

// Used by the MPI runner only (src/cluster/mpi.rs); without the `mpi` feature nothing
// calls into this module but its tests.
#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use crate::defs::Pattern;
use crate::job::files::split_names;
use crate::job::Job;

/// Which rank's data each rank reads with `--rotate-ranks`: the rank as many places on
/// as there are ranks on this host, so that the data comes from another host when there
/// is one (IOR shifts by tasks per node the same way); on a single host, the next rank.
pub fn read_source(rank: u32, size: u32, ranks_on_my_host: u32) -> u32 {
    let size = size.max(1);
    let shift = if ranks_on_my_host < size {
        ranks_on_my_host.max(1)
    } else {
        1
    };
    (rank + shift) % size
}

/// True when the job only reads (its data is another job's, so rotation applies).
fn reads_only(job: &Job) -> bool {
    matches!(job.workload.pattern, Pattern::Read | Pattern::RandRead)
}

/// Makes `job`'s file names this rank's own: rank `rank` writes, and reads `read_from`'s
/// names when the job only reads (`read_from == rank` without rotation).
pub fn make_unique(job: &mut Job, rank: u32, read_from: u32) {
    if !job.files.unique_filename {
        return;
    }
    let k = if reads_only(job) { read_from } else { rank };
    let f = &mut job.files;
    if let Some(list) = &f.filename {
        let names: Vec<String> = split_names(list)
            .into_iter()
            .map(|n| {
                let n = if n.starts_with("/dev/") {
                    n
                } else {
                    format!("{n}.r{k}")
                };
                n.replace(':', "\\:")
            })
            .collect();
        f.filename = Some(names.join(":"));
    } else if f.filename_format.contains("$clientuid") {
        f.filename_format = f.filename_format.replace("$clientuid", &k.to_string());
    } else {
        f.filename_format = format!("{}.r{k}", f.filename_format);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> Job {
        let mut g = Vec::new();
        let raw = crate::options::jobfile::parse_str(text, "t.fio", &mut g).unwrap();
        crate::job::resolve(&raw[0]).unwrap()
    }

    #[test]
    fn names_get_the_rank_and_devices_do_not() {
        let mut j = job("[w]\nrw=write\nfilename=/tmp/a:/dev/sdb\nsize=1m\n");
        make_unique(&mut j, 2, 3);
        assert_eq!(j.files.paths("w", 0), vec!["/tmp/a.r2", "/dev/sdb"]);
        let mut j = job("[w]\nrw=write\ndirectory=/tmp\nsize=1m\n");
        make_unique(&mut j, 1, 1);
        assert_eq!(j.files.paths("w", 0), vec!["/tmp/w.0.0.r1"]);
        let mut j = job("[w]\nrw=write\nfilename_format=f.$clientuid.$jobnum\nsize=1m\n");
        make_unique(&mut j, 5, 5);
        assert_eq!(j.files.paths("w", 0), vec!["f.5.0"]);
    }

    #[test]
    fn unique_filename_0_shares_the_names() {
        let mut j = job("[w]\nrw=write\nfilename=/tmp/a\nunique_filename=0\nsize=1m\n");
        make_unique(&mut j, 2, 2);
        assert_eq!(j.files.paths("w", 0), vec!["/tmp/a"]);
    }

    #[test]
    fn readers_take_the_rotated_rank() {
        let mut w = job("[w]\nrw=write\nfilename=/tmp/a\nsize=1m\n");
        let mut r = job("[r]\nrw=randread\nfilename=/tmp/a\nsize=1m\n");
        make_unique(&mut w, 0, 1);
        make_unique(&mut r, 0, 1);
        assert_eq!(w.files.paths("w", 0), vec!["/tmp/a.r0"]);
        assert_eq!(r.files.paths("r", 0), vec!["/tmp/a.r1"]);
        // 4 ranks, 2 per host: rank 0 reads rank 2's data (on the other host).
        assert_eq!(read_source(0, 4, 2), 2);
        assert_eq!(read_source(3, 4, 2), 1);
        // All on one host: the next rank.
        assert_eq!(read_source(3, 4, 4), 0);
        assert_eq!(read_source(0, 1, 1), 0);
    }
}
