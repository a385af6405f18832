//! Offsets for small jobs, checked against what fio 3.33 issues for the same options.

use super::{plan, FileExtent, Generator, NextIo};
use crate::defs::Ddir;

/// The job clone's generator, with files laid out as fio's null engine lays them out.
pub(crate) fn gen_for(args: &[&str], clone: u32) -> Generator {
    let mut all = vec!["--name=x"];
    all.extend_from_slice(args);
    let inv = crate::cli::parse_args(&all).expect("arguments parse");
    let job = crate::job::resolve(&inv.jobs[0]).expect("job resolves");
    let nr = job
        .raw
        .value(&crate::options::table::NRFILES)
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let sizes = plan::layout_size(&job, clone, &vec![0; nr]);
    let files: Vec<FileExtent> = sizes
        .iter()
        .enumerate()
        .map(|(i, &s)| FileExtent::new(&format!("x.{clone}.{i}"), s).laid_out_from(0))
        .collect();
    Generator::new(&job, clone, &files).expect("generator")
}

fn all(args: &[&str]) -> Vec<NextIo> {
    let mut g = gen_for(args, 0);
    let mut v = Vec::new();
    while let Some(io) = g.next_io() {
        v.push(io);
        assert!(v.len() < 1_000_000, "runaway generator");
    }
    v
}

fn offsets(v: &[NextIo]) -> Vec<u64> {
    v.iter().map(|i| i.offset).collect()
}

#[test]
fn sequential_write_covers_size() {
    let v = all(&["--rw=write", "--size=16k"]);
    assert_eq!(offsets(&v), vec![0, 4096, 8192, 12288]);
    assert!(v.iter().all(|i| i.ddir == Ddir::Write && i.len == 4096));
}

#[test]
fn backward_reads_with_negative_hole() {
    // fio 3.33: rw=read:-8k offset=32k size=32k
    let v = all(&["--rw=read:-8k", "--offset=32k", "--size=32k"]);
    assert_eq!(
        offsets(&v),
        vec![32768, 57344, 53248, 49152, 45056, 40960, 36864, 32768]
    );
}

#[test]
fn random_map_touches_each_block_once() {
    let v = all(&["--rw=randread", "--size=1m"]);
    assert_eq!(v.len(), 256);
    let mut o = offsets(&v);
    o.sort_unstable();
    o.dedup();
    assert_eq!(o.len(), 256);
}

#[test]
fn randrepeat_gives_same_sequence() {
    let a = all(&["--rw=randwrite", "--size=256k"]);
    let b = all(&["--rw=randwrite", "--size=256k"]);
    assert_eq!(a, b);
    assert_ne!(offsets(&a), (0..64).map(|i| i * 4096).collect::<Vec<_>>());
}

#[test]
fn random_offsets_match_fio() {
    // fio 3.33: --rw=randread --size=64k --ioengine=null (randrepeat, thread 1); its
    // seeds are 3.33's, so iobench speaks 3.33 (3.35 changed them).
    let v = all(&["--fio-compat=3.33", "--rw=randread", "--size=64k"]);
    let blocks: Vec<u64> = v.iter().map(|i| i.offset / 4096).collect();
    assert_eq!(
        blocks,
        vec![0, 11, 13, 7, 6, 14, 8, 5, 15, 1, 2, 10, 3, 4, 9, 12]
    );
}
