//! A seeded randomised comparison with fio 3.33: jobs drawn from many combinations of
//! patterns, block sizes, file counts and services, openfiles, offsets, loops, zones,
//! distributions and generators, each run by both tools with `write_iolog`; the logs
//! (every open, close and I/O, in order) must be equal. The draw is fixed by its seed,
//! so a failure names a job that can be rerun by hand. Synchronous engines only: with an
//! asynchronous one fio's file order can depend on completion timing (see the README);
//! strided zones on one file only.

use crate::common;

use std::path::Path;
use std::process::Command;

/// A small deterministic generator (xorshift), so the jobs are the same on every run.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// One random job's options.
fn job(d: &mut Draw) -> Vec<String> {
    let nf: u64 = [1, 1, 2, 3, 4][(d.next() % 5) as usize];
    let mut a = vec![
        format!("--ioengine={}", d.pick(&["psync", "sync", "pvsync"])),
        format!("--nrfiles={nf}"),
        format!(
            "--rw={}",
            d.pick(&[
                "read",
                "write",
                "randread",
                "randwrite",
                "rw",
                "randrw",
                "read:8k",
                "write:-4k",
                "randrw:3",
            ])
        ),
    ];
    let bs = d.pick(&[
        "--bs=4k",
        "--bs=8k",
        "--bsrange=4k-16k",
        "--bsrange=512-8k",
        "--bs=2k",
    ]);
    a.push(bs.to_string());
    let size = [64u64, 128, 256][(d.next() % 3) as usize] * 1024 * nf;
    a.push(format!("--size={size}"));
    let mut maybe = |d: &mut Draw, p: u64, opts: &[&str]| {
        if d.chance(p) {
            a.push(d.pick(opts).to_string());
        }
    };
    maybe(d, 30, &["--loops=2", "--loops=3"]);
    if nf > 1 {
        maybe(
            d,
            60,
            &[
                "--file_service_type=roundrobin",
                "--file_service_type=sequential",
                "--file_service_type=random",
                "--file_service_type=random:2",
                "--file_service_type=zipf:1.1",
                "--file_service_type=normal:30",
                "--file_service_type=pareto:0.3",
            ],
        );
        maybe(d, 40, &["--openfiles=1", "--openfiles=2"]);
    }
    maybe(d, 20, &["--norandommap"]);
    maybe(
        d,
        20,
        &[
            "--random_distribution=zipf:1.2",
            "--random_distribution=pareto:0.5",
            "--random_distribution=normal:20",
            "--random_distribution=zoned:50/20:50/80",
        ],
    );
    maybe(d, 20, &["--offset=10%", "--offset=25%"]);
    maybe(d, 15, &["--rwmixread=30", "--rwmixread=70"]);
    maybe(d, 15, &["--percentage_random=30", "--percentage_random=70"]);
    maybe(d, 10, &["--io_size=1m"]);
    // fio's strided zones are for one file ("only really works with 1 file", its
    // source says); over several they take paths iobench does not follow.
    if nf == 1 {
        maybe(d, 20, &["--zonemode=strided --zonesize=16k --zoneskip=16k"]);
    }
    maybe(
        d,
        10,
        &["--random_generator=lfsr", "--random_generator=tausworthe64"],
    );
    maybe(d, 10, &["--bssplit=4k/50:8k/30:16k/20"]);
    maybe(
        d,
        10,
        &["--rw_sequencer=identical", "--rw_sequencer=sequential"],
    );
    maybe(d, 10, &["--number_ios=10", "--number_ios=50"]);
    maybe(d, 10, &["--filesize=32k-128k", "--filesize=64k"]);
    maybe(d, 10, &["--fsync=2", "--fdatasync=3"]);
    a.iter()
        .flat_map(|s| s.split(' ').map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// The iolog of `tool` for `args` in a fresh `dir` (see `common::run_logged`).
fn iolog(tool: Command, dir: &Path, args: &[String]) -> Vec<String> {
    common::run_logged(tool, dir, args).0
}

#[test]
fn random_jobs_issue_what_fio_issues() {
    let Some(_) = common::fio() else { return };
    let dir = common::scratch("gen_fuzz").join("d");
    // IOBENCH_FUZZ_SEED and IOBENCH_FUZZ_JOBS draw other jobs (for a longer hunt by hand).
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut d = Draw(
        env("IOBENCH_FUZZ_SEED")
            .unwrap_or(0x9e37_79b9_7f4a_7c15)
            .max(1),
    );
    let jobs = env("IOBENCH_FUZZ_JOBS").unwrap_or(30);
    let mut compared = 0;
    for i in 0..jobs {
        let args = job(&mut d);
        let theirs = iolog(common::fio().unwrap(), &dir, &args);
        let ours = iolog(common::iobench(), &dir, &args);
        if let Some(at) = ours.iter().zip(&theirs).position(|(a, b)| a != b) {
            panic!(
                "job {i} ({}) differs at line {at}: fio '{}', iobench '{}'",
                args.join(" "),
                theirs[at],
                ours[at]
            );
        }
        assert_eq!(ours.len(), theirs.len(), "job {i} ({})", args.join(" "));
        compared += ours.len();
    }
    assert!(
        compared > 30 * jobs as usize,
        "only {compared} lines compared"
    );
}
