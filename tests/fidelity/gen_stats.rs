//! Statistical properties of generated workloads: mix ratios and skew, checked against
//! their definitions (no fio needed).

use crate::gen_util;
use gen_util::iobench_ios;
use std::collections::HashMap;

#[test]
fn rwmixread_70_gives_70_percent_reads() {
    let ios = iobench_ios(&["--rw=randrw", "--rwmixread=70", "--size=64m"], 0);
    let reads = ios.iter().filter(|i| i.ddir == "read").count() as f64;
    let share = reads / ios.len() as f64 * 100.0;
    assert!((68.0..=72.0).contains(&share), "read share {share:.2}%");
}

#[test]
fn rwmixwrite_sets_the_other_share() {
    let ios = iobench_ios(&["--rw=rw", "--rwmixwrite=25", "--size=32m"], 0);
    let writes = ios.iter().filter(|i| i.ddir == "write").count() as f64;
    let share = writes / ios.len() as f64 * 100.0;
    assert!((23.0..=27.0).contains(&share), "write share {share:.2}%");
}

/// The share of accesses that land on the hottest `frac` of the blocks touched.
fn hot_share(args: &[&str], blocks: usize, frac: f64) -> f64 {
    let ios = iobench_ios(args, 0);
    let mut hits: HashMap<u64, usize> = HashMap::new();
    for io in &ios {
        *hits.entry(io.offset / 4096).or_default() += 1;
    }
    let mut counts: Vec<usize> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let hot = (blocks as f64 * frac) as usize;
    counts.iter().take(hot).sum::<usize>() as f64 / ios.len() as f64
}

#[test]
fn zipf_concentrates_as_theta_says() {
    // 4096 blocks of 4k; io_size lets the job draw 8 times as many I/Os as blocks.
    let n = 4096usize;
    let share = hot_share(
        &[
            "--rw=randread",
            "--random_distribution=zipf:1.2",
            "--size=16m",
            "--io_size=128m",
        ],
        n,
        0.10,
    );
    // Theory: the top 10% of ranks carry H(n/10, θ) / H(n, θ) of the mass.
    let h = |m: usize| (1..=m).map(|i| (i as f64).powf(-1.2)).sum::<f64>();
    let want = h(n / 10) / h(n);
    assert!(
        (share - want).abs() < 0.03,
        "hottest 10% got {share:.3} of accesses, theory {want:.3}"
    );
    // Without skew the hottest tenth gets far less (each pass repeats its draws, as in
    // fio, so this is the spread of 4096 uniform draws).
    let uniform = hot_share(
        &[
            "--rw=randread",
            "--norandommap",
            "--size=16m",
            "--io_size=128m",
        ],
        n,
        0.10,
    );
    eprintln!("zipf {share:.3} theory {want:.3} uniform {uniform:.3}");
    assert!(uniform < want / 2.0, "uniform hot share {uniform:.3}");
}

#[test]
fn random_map_covers_every_block_once_per_pass() {
    let ios = iobench_ios(
        &[
            "--rw=randwrite",
            "--bsrange=4k-16k",
            "--size=8m",
            "--loops=2",
        ],
        0,
    );
    let total: u64 = ios.iter().map(|i| i.len).sum();
    assert_eq!(total, 16 << 20);
    // Each pass covers the region exactly once, byte for byte.
    let half = ios.len() / 2;
    for pass in [&ios[..half], &ios[half..]] {
        let mut cover = vec![0u8; (8 << 20) / 4096];
        for io in pass {
            for b in io.offset / 4096..(io.offset + io.len) / 4096 {
                cover[b as usize] += 1;
            }
        }
        assert!(
            cover.iter().all(|&c| c == 1),
            "a block was missed or repeated"
        );
    }
}
